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
//   barrier     the persistent kernel over empty GEMVs: the barriers alone;
//   staged      one block an SM, each warp's rows streamed into shared memory by the bulk copy engine ahead of its
//               sums, across the GEMVs and the grid barriers between them (pb_staged below; session 53).
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

// The staged form: one block an SM of W warps, each warp its own producer. A warp's rows of every GEMV of the step
// (its W-th of its block's share of each GEMV's rows, the block's share an n / blocks run of rows) come as a stream of
// chunks (up to kCap bytes of consecutive rows: their codes, then their headers), each copied into shared memory by
// the bulk copy engine (cp.async.bulk, lane 0 asking, an mbarrier a stage counting the bytes in), NS chunks ahead of
// the warp's sums. The weights depend on nothing before them, so the stream runs on across the GEMVs' boundaries and
// through the grid barrier between them: when a warp reaches the barrier, its next GEMV's first NS chunks are in
// flight or in, so the DRAM is asked for them while the grid waits (the launches' gap, and the persistent form's
// barrier above, leave it idle then). The sums are lk_gemv_sums_i8b's (a lane's units lane + 32 t in order, lk_fmt's
// dot, lk_warp_sum), the codes and the 256-block's header (the words lk_fmt's share hands around) read from shared
// memory: the outputs equal the launched ones bit for bit. After each barrier the block stages the GEMV's int8 copy in
// shared memory first (one L2 round trip, as a persistent decode would read each step's input after its dependency).
// Session 53 (an H100): it loses to the launches, 2,024 us against 1,568 on the 8B's step (bench/NOTES.md): the sums at
// 8-12 warps an SM set the pace, so each barrier adds to the step instead of hiding under the copies.
constexpr int kCap = 8192;  // (a stage's bytes: one row of the 8B's down, k 14,336: 7,168 + 896)
constexpr int kXs = 14336 + 14336 / 32 * 4;  // (the widest int8 copy: k codes and k / 32 scales)

LK_DEVICE unsigned pb_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
LK_DEVICE void pb_bar_init(unsigned long long* b) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(pb_smem(b)) : "memory");
}
// (A wait that never ends traps: a bench that would hang reports an error instead.)
LK_DEVICE void pb_bar_wait(unsigned long long* b, unsigned parity) {
  for (long long tries = 0;; ++tries) {
    unsigned done;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(pb_smem(b)), "r"(parity)
        : "memory");
    if (done) return;
    if (tries > (1ll << 26)) __trap();
  }
}
// Rows [row, row + c) of GEMV p into `stage` (codes, then headers), counted in on `bar`.
LK_DEVICE void pb_bulk_rows(const PbGemv& p, int row, int c, unsigned char* stage, unsigned long long* bar) {
  const unsigned qb = (unsigned)(c * (p.k / 2)), sb = (unsigned)(c * (p.k / 16));
  // (the warp's reads of the stage ordered before the copy's writes)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(pb_smem(bar)), "r"(qb + sb) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   pb_smem(stage)),
               "l"(p.m.q + (size_t)row * (p.k / 2)), "r"(qb), "r"(pb_smem(bar))
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   pb_smem(stage + qb)),
               "l"(p.m.s + (size_t)row * (p.k / 16)), "r"(sb), "r"(pb_smem(bar))
               : "memory");
}
// Warp w of W in block b of B: its rows of an n-row GEMV, [lo, hi).
LK_DEVICE void pb_warp_rows(int n, int b, int B, int w, int W, int& lo, int& hi) {
  const int b0 = (int)((long long)n * b / B), b1 = (int)((long long)n * (b + 1) / B);
  lo = b0 + (b1 - b0) * w / W, hi = b0 + (b1 - b0) * (w + 1) / W;
}
// A warp's place in its stream of chunks: GEMV g, from row `row` (g == count: past the end).
struct PbCursor {
  int g, row, hi;
};
LK_DEVICE int pb_chunk_rows(const PbGemv& p) { return max(1, kCap / (p.k / 2 + p.k / 16)); }
LK_DEVICE void pb_settle(const PbGemv* gemvs, int count, PbCursor& c, int w, int W) {
  while (c.g < count && c.row >= c.hi) {
    if (++c.g == count) return;
    pb_warp_rows(gemvs[c.g].n, blockIdx.x, gridDim.x, w, W, c.row, c.hi);
  }
}

template <int W, int NS, bool BAR, bool SUMS = true>
__global__ void __launch_bounds__(W * 32, 1) pb_staged(const PbGemv* __restrict__ gemvs, int count, unsigned* bar) {
  extern __shared__ __align__(128) unsigned char pb_dyn[];
  using F = lk_fmt<Q4K>;
  unsigned long long* full = reinterpret_cast<unsigned long long*>(pb_dyn);  // W x NS
  unsigned char* xs = pb_dyn + 128 * ((W * NS * 8 + 127) / 128);  // the GEMV's int8 copy (kXs bytes at most)
  unsigned char* ring = xs + kXs;
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (threadIdx.x == 0) {
    for (int i = 0; i < W * NS; ++i) pb_bar_init(full + i);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  unsigned long long* mine = full + w * NS;
  unsigned char* stages = ring + (size_t)w * NS * kCap;
  PbCursor pc{0, 0, 0};  // the producer's: the next chunk to ask for
  pb_warp_rows(gemvs[0].n, blockIdx.x, gridDim.x, w, W, pc.row, pc.hi);
  pb_settle(gemvs, count, pc, w, W);
  auto ask = [&](int s) {  // the next chunk into stage s (lane 0 asks; every lane moves the cursor)
    if (pc.g >= count) return;
    const PbGemv& p = gemvs[pc.g];
    const int c = min(pb_chunk_rows(p), pc.hi - pc.row);
    if (lane == 0) pb_bulk_rows(p, pc.row, c, stages + (size_t)s * kCap, mine + s);
    pc.row += c;
    pb_settle(gemvs, count, pc, w, W);
  };
  for (int s = 0; s < NS; ++s) ask(s);
  unsigned seq = 0;
  for (int g = 0; g < count; ++g) {
    const PbGemv p = gemvs[g];
    {  // The block stages the GEMV's int8 copy after the barrier, as a persistent decode reads its input (one L2 round
       // trip after each dependency): the codes, then the 32-groups' scales.
      const int4* src = reinterpret_cast<const int4*>(p.x.q);
      __syncthreads();  // (every warp done with the last GEMV's copy)
      for (int c = threadIdx.x; c < p.k / 16 + p.k / 128; c += W * 32) reinterpret_cast<int4*>(xs)[c] = __ldg(src + c);
      __syncthreads();
    }
    const float* xsc = reinterpret_cast<const float*>(xs + p.k);
    int row, hi;
    pb_warp_rows(p.n, blockIdx.x, gridDim.x, w, W, row, hi);
    const int units = p.k / 32, cr = pb_chunk_rows(p);
    while (row < hi) {
      const int s = seq % NS;
      int c = min(cr, hi - row);
      pb_bar_wait(mine + s, (seq / NS) & 1);
      const unsigned char* stage = stages + (size_t)s * kCap;
      if constexpr (!SUMS) {  // (the stream alone: each chunk's first word stored, no sums)
        if (lane == 0) p.y[row] = (float)*reinterpret_cast<const int*>(stage);
        c = 0;
      }
      for (int j = 0; j < c; ++j) {
        const int4* q = reinterpret_cast<const int4*>(stage + (size_t)j * (p.k / 2));
        const int4* h = reinterpret_cast<const int4*>(stage + (size_t)c * (p.k / 2) + (size_t)j * (p.k / 16));
        lk_acc acc[1][1] = {{0}};
#pragma unroll 4
        for (int u = lane; u < units; u += 32) {  // (units a multiple of 32 at every shape here)
          F::Raw r;
          r.q = q[u];
          r.sub = u % 8;
          const int4 hd = h[u / 8];  // (the 256-block's header whole: the words lk_fmt's share hands around)
          r.s = make_int4(hd.x, r.sub < 4 ? hd.y : hd.z, r.sub < 4 ? hd.y : hd.z, hd.w);
          const int4 lo = reinterpret_cast<const int4*>(xs)[2 * u], hi2 = reinterpret_cast<const int4*>(xs)[2 * u + 1];
          const int a[8] = {lo.x, lo.y, lo.z, lo.w, hi2.x, hi2.y, hi2.z, hi2.w};
          acc[0][0] += F::dot(r, a, xsc[u]);  // (lk_i8b_unit's product over gemv_prequant's copy)
        }
        acc[0][0] = lk_warp_sum(acc[0][0]);
        lk_gemv_store<1, 1>(acc, nullptr, p.y, p.n, row + j);
      }
      __syncwarp();
      ask(s);
      row += min(cr, hi - row), ++seq;
    }
    if constexpr (BAR) pb_grid_sync(bar, gridDim.x);
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
    const double launched4 = graph_us(s, 1, [&] {
      for (const PbGemv& g : ga)
        launch(lk_gemv<Q4K, 1, 1, lk_xq>, (g.n + 3) / 4, 128, s, g.m, g.x, (const float*)nullptr, g.y, g.k, g.n);
    });
    report("launched, 4 warps a block", launched4, "-");
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
    // staged: one block an SM, each warp's chunks of rows NS ahead in shared memory (with the grid barrier between
    // GEMVs, and without it: the stream alone).
    auto staged = [&](auto kernel, int W, int NS, bool with_bar, bool sums = true) {
      const size_t smem = 128 * ((W * NS * 8 + 127) / 128) + kXs + (size_t)W * NS * kCap;
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      const int blocks = prop.multiProcessorCount;
      void* args[] = {(void*)&dg, (void*)&count, (void*)&bar};
      CK(cudaMemset(yb, 0, sizeof(float) * ymax));
      const double us =
          median_us(s, [&] { CK(cudaLaunchCooperativeKernel((void*)kernel, blocks, W * 32, args, smem, s)); });
      CK(cudaMemcpy(hb.data(), yb, sizeof(float) * ymax, cudaMemcpyDeviceToHost));
      const std::string name = std::string(sums ? "staged " : "stream only ") + std::to_string(W) + "w x" +
                               std::to_string(NS) + (with_bar ? "" : " no barrier");
      report(name.c_str(), us,
             !sums ? "-" : std::memcmp(ha.data(), hb.data(), sizeof(float) * ymax) == 0 ? "equal" : "DIFFER");
    };
    staged(pb_staged<8, 3, true>, 8, 3, true);
    staged(pb_staged<4, 6, true>, 4, 6, true);
    staged(pb_staged<12, 2, true>, 12, 2, true);
    staged(pb_staged<8, 3, false>, 8, 3, false);
    staged(pb_staged<12, 2, false>, 12, 2, false);
    // (session 53: the sums at 8-12 warps an SM, or the stream? The copies waited for and dropped.)
    staged(pb_staged<8, 3, false, false>, 8, 3, false, false);
    staged(pb_staged<8, 3, true, false>, 8, 3, true, false);
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
