// Before building a persistent decode (#16's 0.75 of the read bound, #18's 480 and 2,500 tok/s): what one kernel that
// walks a decode step's GEMVs with a grid barrier between them gains over a launch a GEMV. A step's projections at a
// model's shapes (Q4_K, random codes; llama-3.1-8b: 32 layers of qkv, o, gate+up, down = 128 GEMVs, 3.9 GB; qwen3-0.6b
// 28 layers, 112 GEMVs) through the lane's GEMV body (lk_gemv_sums over gemv_prequant's int8 copy, a warp a row):
//   launched    lk_gemv a GEMV, under programmatic dependent launch, the step one CUDA graph (today's decode);
//   launched, B/SM grid   the same launches over a persistent kernel's grid (the control: launches or grid shape);
//   persistent  one cooperative kernel of B blocks an SM, the warps striding over each GEMV's rows, a grid barrier
//   after
//               each GEMV (a counter and a generation in global memory);
//   + prefetch  the same, each warp asking L2 for its first row of the next GEMV before it waits at the barrier (the
//               weights depend on nothing before them);
//   barrier     the persistent kernel over empty GEMVs: the barriers alone.
// Prints a line a model and variant: microseconds a step, a GEMV, the step's bytes over its time, and whether the
// outputs equal the launched ones bit for bit (the same rows' sums in the same order, so they must).
//
// build: nvcc -O3 -std=c++20 -arch=sm_90 -o persistent_bench bench/persistent_bench.cu     run: ./persistent_bench
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

typedef float lk_act;
typedef float lk_acc;
#define LK_INT8 1
#define LK_KV 0
#include "../kernels/prelude.cuh"
#include "../kernels/shapes.cuh"
#include "../kernels/async.cuh"
#include "../kernels/formats.cuh"
#include "../kernels/norm.cuh"
#include "../kernels/kv.cuh"
#include "../kernels/rope.cuh"
#include "../kernels/gemv.cuh"
#include "../kernels/gemm.cuh"

#include "bench_cuda.cuh"

using Q4K = lk_blk<LK_Q4_K>;

// One GEMV of the step: y = W x over x's int8 copy.
struct PbGemv {
  Q4K m;
  lk_xq x;
  float* y;
  int k, n;
};

// Random codes filled on the device (4 GB from the host would take most of a minute): byte i a hash of i and the
// seed; Q4_K's headers (plane 2, 16 bytes a 256-block) get small finite d and dmin.
__global__ void pb_fill(unsigned char* p, size_t bytes, unsigned seed, bool headers) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    unsigned char v = (unsigned char)h;
    if (headers && i % 16 < 4) v = i % 2 ? (unsigned char)(0x18 + (h & 3)) : (unsigned char)h;  // (f16 0x18xx: ~2e-3)
    p[i] = v;
  }
}

static unsigned char* device_fill(size_t bytes, unsigned seed, bool headers) {
  unsigned char* d = nullptr;
  CK(cudaMalloc(&d, std::max<size_t>(bytes, 16)));
  pb_fill<<<1024, 256>>>(d, bytes, seed, headers);
  CK(cudaGetLastError());
  return d;
}

// A grid barrier: block 0 .. blocks-1 arrive on bar[0]; the last resets it and advances the generation bar[32] (its
// own 128-byte line), which the others wait on. Memory written before it is visible after it (fences on both sides).
LK_DEVICE void pb_grid_sync(unsigned* bar, unsigned blocks) {
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile unsigned* gen = bar + 32;
    const unsigned g = *gen;
    __threadfence();
    if (atomicAdd(bar, 1u) == blocks - 1) {
      atomicExch(bar, 0u);
      __threadfence();
      atomicAdd(bar + 32, 1u);
    } else {
      while (*gen == g) __nanosleep(32);
    }
    __threadfence();
  }
  __syncthreads();
}

LK_DEVICE void pb_prefetch_row(const PbGemv& p, int row) {
  const int lane = threadIdx.x & 31;
  const size_t codes = (size_t)p.k / 2, at = (size_t)row * codes;  // (4-bit codes: half a byte an element)
  for (size_t b = (size_t)lane * 128; b < codes; b += 32 * 128)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p.m.q + at + b));
}

// A GEMV's rows over the grid's warps, each striding by the grid's warp count (a warp's rows are its row0, row0 +
// warps, ...).
LK_DEVICE void pb_rows(const PbGemv& p, int gw, int warps) {
  for (int row0 = gw; row0 < p.n; row0 += warps) {
    lk_acc acc[1][1];
    lk_gemv_sums<Q4K, 1, 1>(p.m, p.x, p.k, p.n, row0, acc);
    lk_gemv_store<1, 1>(acc, nullptr, p.y, p.n, row0);
  }
}

// The control: a GEMV a launch as today, but over a persistent kernel's grid (B blocks an SM striding over the rows),
// so that the launches' cost and the grid's shape are told apart.
__global__ void __launch_bounds__(256) pb_strided(PbGemv p) {
  lk_pdl_entry();
  pb_rows(p, blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), gridDim.x * (blockDim.x >> 5));
}

template <bool PF>
__global__ void __launch_bounds__(256) pb_persistent(const PbGemv* __restrict__ gemvs, int count, unsigned* bar) {
  const int warps = gridDim.x * (blockDim.x >> 5), gw = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  for (int i = 0; i < count; ++i) {
    const PbGemv p = gemvs[i];
    pb_rows(p, gw, warps);
    if constexpr (PF)
      if (i + 1 < count && gw < gemvs[i + 1].n) pb_prefetch_row(gemvs[i + 1], gw);
    pb_grid_sync(bar, gridDim.x);
  }
}

struct Model {
  const char* name;
  int layers, d, qkv, ffn;  // (qkv: the fused projection's rows; o reads the query heads' d wide values)
  int q;                    // the query heads' width (o's k)
};

int main() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const Model models[] = {{"llama-3.1-8b", 32, 4096, 6144, 14336, 4096}, {"qwen3-0.6b", 28, 1024, 4096, 3072, 2048}};
  printf("%-14s %-26s %10s %9s %9s %s\n", "model", "variant", "us/step", "us/gemv", "GB/s", "bits");
  for (const Model& md : models) {
    // The activations' int8 copies, one a width (the copy's scales follow its k values).
    std::vector<float> hx(14336);
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& v : hx) v = nd(rng);
    float* x = nullptr;
    CK(cudaMalloc(&x, sizeof(float) * hx.size()));
    CK(cudaMemcpy(x, hx.data(), sizeof(float) * hx.size(), cudaMemcpyHostToDevice));
    auto copy_of = [&](int k) {
      int* xq = nullptr;
      CK(cudaMalloc(&xq, k * 2 + k / 32 * 8));
      launch(lk_quantize_i8<false>, (k / 4 + 63) / 64, 64, s, (const float*)x, xq, k, 1);
      return lk_xq{xq, 1, 0};
    };
    const lk_xq xd = copy_of(md.d), xqw = copy_of(md.q), xf = copy_of(md.ffn);
    std::vector<PbGemv> gemvs;
    size_t bytes = 0, ymax = 0;
    unsigned seed = 1;
    auto add = [&](int n, int k, lk_xq xin) {
      const unsigned long long e = (unsigned long long)n * k;
      Q4K m{device_fill(lk_plane_bytes(LK_Q4_K, 0, e), seed++, false), nullptr,
            device_fill(lk_plane_bytes(LK_Q4_K, 2, e), seed++, true), nullptr};
      bytes += lk_plane_bytes(LK_Q4_K, 0, e) + lk_plane_bytes(LK_Q4_K, 2, e);
      gemvs.push_back({m, xin, nullptr, k, n});
      ymax += n;
    };
    for (int l = 0; l < md.layers; ++l) {
      add(md.qkv, md.d, xd);
      add(md.d, md.q, xqw);
      add(2 * md.ffn, md.d, xd);
      add(md.d, md.ffn, xf);
    }
    float *ya = nullptr, *yb = nullptr;
    CK(cudaMalloc(&ya, sizeof(float) * ymax));
    CK(cudaMalloc(&yb, sizeof(float) * ymax));
    auto place = [&](float* y) {
      std::vector<PbGemv> g = gemvs;
      size_t at = 0;
      for (auto& e : g) e.y = y + at, at += e.n;
      return g;
    };
    CK(cudaDeviceSynchronize());
    const std::vector<PbGemv> ga = place(ya), gb = place(yb);
    const int count = (int)gb.size();
    auto report = [&](const char* variant, double us, const char* bits) {
      printf("%-14s %-26s %10.1f %9.2f %9.0f %s\n", md.name, variant, us, us / count, bytes / us / 1e3, bits);
    };
    // launched: today's step, a GEMV a launch in one graph.
    const double launched = graph_us(s, 1, [&] {
      for (const PbGemv& g : ga)
        launch(lk_gemv<Q4K, 1, 1, lk_xq>, (g.n + 7) / 8, 256, s, g.m, g.x, (const float*)nullptr, g.y, g.k, g.n);
    });
    report("launched (graph, pdl)", launched, "-");
    std::vector<float> ha(ymax), hb(ymax);
    CK(cudaMemcpy(ha.data(), ya, sizeof(float) * ymax, cudaMemcpyDeviceToHost));
    PbGemv* dg = nullptr;
    CK(cudaMalloc(&dg, sizeof(PbGemv) * count));
    CK(cudaMemcpy(dg, gb.data(), sizeof(PbGemv) * count, cudaMemcpyHostToDevice));
    std::vector<PbGemv> empty = gb;
    for (auto& e : empty) e.n = 0;
    PbGemv* de = nullptr;
    CK(cudaMalloc(&de, sizeof(PbGemv) * count));
    CK(cudaMemcpy(de, empty.data(), sizeof(PbGemv) * count, cudaMemcpyHostToDevice));
    unsigned* bar = nullptr;
    CK(cudaMalloc(&bar, 256));
    CK(cudaMemset(bar, 0, 256));
    int most = 0, most_pf = 0;  // (a cooperative launch must fit at once: the smaller of the two kernels' counts)
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&most, pb_persistent<false>, 256, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&most_pf, pb_persistent<true>, 256, 0));
    most = std::min(most, most_pf);
    std::vector<int> pers;  // blocks an SM: 1, 2, 4 and the most that fit, each once
    for (int per : {1, 2, 4, most})
      if (per <= most && std::find(pers.begin(), pers.end(), per) == pers.end()) pers.push_back(per);
    for (int per : pers) {
      const int blocks = prop.multiProcessorCount * per;
      CK(cudaMemset(yb, 0, sizeof(float) * ymax));
      const double strided = graph_us(s, 1, [&] {
        for (const PbGemv& g : gb) launch(pb_strided, blocks, 256, s, g);
      });
      CK(cudaMemcpy(hb.data(), yb, sizeof(float) * ymax, cudaMemcpyDeviceToHost));
      report(("launched, " + std::to_string(per) + "/SM grid").c_str(), strided,
             std::memcmp(ha.data(), hb.data(), sizeof(float) * ymax) == 0 ? "equal" : "DIFFER");
      CK(cudaMemset(yb, 0, sizeof(float) * ymax));
      for (int pf = 0; pf < 3; ++pf) {
        auto kernel = pf == 1 ? pb_persistent<true> : pb_persistent<false>;
        const PbGemv* list = pf == 2 ? de : dg;
        void* args[] = {(void*)&list, (void*)&count, (void*)&bar};
        const double us =
            median_us(s, [&] { CK(cudaLaunchCooperativeKernel((void*)kernel, blocks, 256, args, 0, s)); });
        std::string bits = "-";
        if (pf < 2) {
          CK(cudaMemcpy(hb.data(), yb, sizeof(float) * ymax, cudaMemcpyDeviceToHost));
          bits = std::memcmp(ha.data(), hb.data(), sizeof(float) * ymax) == 0 ? "equal" : "DIFFER";
          CK(cudaMemset(yb, 0, sizeof(float) * ymax));
        }
        const std::string name = std::string(pf == 0   ? "persistent"
                                             : pf == 1 ? "persistent+prefetch"
                                                       : "barriers only") +
                                 " " + std::to_string(per) + "/SM";
        report(name.c_str(), us, bits.c_str());
      }
    }
    printf("%-14s launched %.1f us a step; the step's weights %.2f GB\n", md.name, launched, bytes / 1e9);
    CK(cudaDeviceSynchronize());
    for (auto& g : gemvs) {
      CK(cudaFree((void*)g.m.q));
      CK(cudaFree((void*)g.m.s));
    }
    for (void* p :
         {(void*)ya, (void*)yb, (void*)dg, (void*)de, (void*)bar, (void*)x, (void*)xd.q, (void*)xqw.q, (void*)xf.q})
      CK(cudaFree(p));
  }
  return 0;
}
