// Attention alone (issues #18, #19): the lane's attention kernels over an f16 cache at llama-3.1-8b's shapes (32 query
// heads, 8 key/value heads of 128), for the decode step at several depths and for a 256-row chunk, each with its
// splits and the fold after. Layers' caches rotate through more bytes than L2 holds. Prints a line per kernel, depth
// and splits: microseconds a layer (median of 5 runs over the layers), the cache bytes read over that time (decode) or
// the products' rate (chunk), and the largest difference from lk_attention's output relative to its largest value
// (lk_attention sums in f32 from the same cache: the tensor-core kernels round the queries and weights to f16).
//
// build: nvcc -O3 -std=c++17 -arch=sm_90 -o attention_bench bench/attention_bench.cu
// run: ./attention_bench [warp|lanes|mma|mmafold [DEPTH [SPLITS]]]   (one kernel's lines alone; mmafold: the decode
// step folding its own splits, as the lane's attn_mma 2 does; a depth (and splits) alone: its decode lines only)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

typedef float lk_act;
typedef float lk_acc;
#define LK_KV 1
// clang-format off
#include "../kernels/prelude.cuh"
#include "../kernels/shapes.cuh"
#include "../kernels/async.cuh"
#include "../kernels/formats.cuh"
#include "../kernels/norm.cuh"
#include "../kernels/kv.cuh"
#include "../kernels/rope.cuh"
#include "../kernels/attention.cuh"
#include "../kernels/attention_mma.cuh"
// clang-format on

#include "cuda_check.cuh"

constexpr int HQ = 32, HK = 8, HD = 128, G = HQ / HK, CTX = 33024;
constexpr int kStepThreads = 32 * lk_attention_mma_warps(true, HD, HD);  // (a chunk's blocks: 32 LK_AM_WARPS)

struct Setup {
  int layers;
  std::vector<__half*> kc, vc;
  float* q;
  float* out;
  float* ref;
  float* part;
  int* pos;
};

// One layer's attention by `kernel` over `rows` rows at position `at`, splits and fold included.
using Launch = std::function<void(int layer, int rows, int splits)>;

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";  // a kernel's name: that one alone
  const int only_depth = argc > 2 ? atoi(argv[2]) : 0;  // a decode depth alone (no chunks), e.g. for ncu
  const int only_splits = argc > 3 ? atoi(argv[3]) : 0;  // and a split count
  Setup s;
  const size_t cache = (size_t)HK * CTX * HD;  // elements a layer's cache
  s.layers = 4;                                // 4 x 2 x 67.6 MB: past L2 at every depth
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<__half> host(cache);
  for (int l = 0; l < s.layers; ++l) {
    __half *k, *v;
    CK(cudaMalloc(&k, cache * 2));
    CK(cudaMalloc(&v, cache * 2));
    for (auto& x : host) x = __float2half(nd(rng));
    CK(cudaMemcpy(k, host.data(), cache * 2, cudaMemcpyHostToDevice));
    for (auto& x : host) x = __float2half(nd(rng));
    CK(cudaMemcpy(v, host.data(), cache * 2, cudaMemcpyHostToDevice));
    s.kc.push_back(k);
    s.vc.push_back(v);
  }
  const int maxrows = 256;
  std::vector<float> hq((size_t)maxrows * HQ * HD);
  for (auto& x : hq) x = nd(rng) * 0.5f;
  CK(cudaMalloc(&s.q, hq.size() * 4));
  CK(cudaMemcpy(s.q, hq.data(), hq.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&s.out, (size_t)maxrows * HQ * HD * 4));
  CK(cudaMalloc(&s.ref, (size_t)maxrows * HQ * HD * 4));
  CK(cudaMalloc(&s.part, (size_t)maxrows * HQ * 128 * (HD + 2) * 4));  // (up to 128 splits)
  CK(cudaMalloc(&s.pos, 4));
  const double scale = 1.0 / std::sqrt(double(HD));
  const float scale2 = float(1.4426950408889634 * scale);

  // Every launch on one stream, captured as a CUDA graph for the timing (the lane's decode step is a graph: at a few
  // microseconds a launch, launching one by one would time the host).
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  int* count;  // (mmafold: a count a key/value head, zero between launches)
  CK(cudaMalloc(&count, HK * 4));
  CK(cudaMemset(count, 0, HK * 4));
  auto fold = [&](int rows, int splits, float* out) {
    if (splits > 1)
      lk_attention_fold<false><<<dim3(HQ, rows), 128, 0, st>>>(s.part, out, nullptr, HQ, HD, splits, nullptr);
  };
  auto warp_kernel = [&](int l, int rows, int splits, float* out) {
    const size_t sm = lk_attention_smem(4, G, 4);
    lk_attention<G, 4, 4><<<dim3(HK, splits, rows), 128, sm, st>>>(
        s.q, s.kc[l], s.vc[l], s.pos, splits > 1 ? nullptr : out, splits > 1 ? s.part : nullptr, nullptr, 0, HQ, HD, HD,
        CTX, scale, splits, G, nullptr);
    fold(rows, splits, out);
  };
  auto lanes_kernel = [&](int l, int rows, int splits, float* out) {
    const size_t sm = lk_attention_lanes_smem(4, G, 4, HD);
    lk_attention_lanes<G, 4><<<dim3(HK, splits, rows), 128, sm, st>>>(
        s.q, s.kc[l], s.vc[l], s.pos, splits > 1 ? nullptr : out, splits > 1 ? s.part : nullptr, nullptr, 0, HQ, HD, HD,
        CTX, scale, splits, G, nullptr);
    fold(rows, splits, out);
  };
  auto mma_kernel = [&](int l, int rows, int splits, float* out) {
    const bool step = rows * G <= 16;
    const int m = lk_attention_mma_rows(step);
    const dim3 grid(HK, (rows * G + m - 1) / m, splits);
    const size_t sm = lk_attention_mma_smem(HD, HD, step);
    if (step)
      lk_attention_mma<HD, HD, true><<<grid, kStepThreads, sm, st>>>(
          s.q, s.kc[l], s.vc[l], s.pos, splits > 1 ? nullptr : out, splits > 1 ? s.part : nullptr, nullptr, 0, rows, HQ,
          CTX, scale2, splits, G, nullptr, nullptr, lk_rope_args{});
    else
      lk_attention_mma<HD, HD, false><<<grid, 128, sm, st>>>(s.q, s.kc[l], s.vc[l], s.pos, splits > 1 ? nullptr : out,
                                                             splits > 1 ? s.part : nullptr, nullptr, 0, rows, HQ, CTX,
                                                             scale2, splits, G, nullptr, nullptr, lk_rope_args{});
    fold(rows, splits, out);
  };
  // The decode step's attention folding its own splits (the lane's under attn_mma 2 with splits): no fold launch.
  auto mmafold_kernel = [&](int l, int rows, int splits, float* out) {
    if (rows * G > 16) return mma_kernel(l, rows, splits, out);
    lk_attention_mma<HD, HD, true><<<dim3(HK, 1, splits), kStepThreads, lk_attention_mma_smem(HD, HD, true), st>>>(
        s.q, s.kc[l], s.vc[l], s.pos, out, splits > 1 ? s.part : nullptr, nullptr, 0, rows, HQ, CTX, scale2, splits, G,
        nullptr, splits > 1 ? count : nullptr, lk_rope_args{});
  };
  CK(cudaFuncSetAttribute(lk_attention_mma<HD, HD, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          lk_attention_mma_smem(HD, HD, true)));
  CK(cudaFuncSetAttribute(lk_attention_mma<HD, HD, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          lk_attention_mma_smem(HD, HD, false)));

  using K = std::function<void(int, int, int, float*)>;
  struct Named {
    const char* name;
    K k;
  };
  const std::vector<Named> kernels = {
      {"warp", warp_kernel}, {"lanes", lanes_kernel}, {"mma", mma_kernel}, {"mmafold", mmafold_kernel}};
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  // The largest |out - ref| over the largest |ref|.
  auto diff = [&](int rows) {
    std::vector<float> a((size_t)rows * HQ * HD), b(a.size());
    CK(cudaMemcpy(a.data(), s.out, a.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), s.ref, b.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0, top = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!std::isfinite(a[i])) return INFINITY;
      worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
      top = std::max(top, std::fabs(double(b[i])));
    }
    return float(worst / top);
  };
  auto time = [&](const K& k, int rows, int splits) {
    std::vector<float> runs;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int l = 0; l < s.layers; ++l) k(l, rows, splits, s.out);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int run = 0; run < 6; ++run) {
      CK(cudaEventRecord(e0, st));
      CK(cudaGraphLaunch(ge, st));
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (run) runs.push_back(ms * 1000.f / s.layers);
    }
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaGetLastError());
    return median(runs);
  };

  printf("%-6s %6s %5s %6s %10s %10s %10s\n", "kernel", "rows", "depth", "splits", "us/layer", "rate", "max diff");
  for (int depth : {5, 64, 127, 512, 2048, 8192, 32768}) {  // decode: the row at position `depth`
    if (only_depth && depth != only_depth) continue;
    CK(cudaMemcpy(s.pos, &depth, 4, cudaMemcpyHostToDevice));
    warp_kernel(0, 1, 1, s.ref);
    CK(cudaDeviceSynchronize());
    const double bytes = 2.0 * HK * (depth + 1) * HD * 2;
    for (const Named& n : kernels)
      if (only.empty() || only == n.name)
        for (int splits : only_splits ? std::vector<int>{only_splits} : std::vector<int>{1, 2, 4, 8, 16, 32, 64}) {
          if (!only_splits && splits > 1 && 32 * splits > depth) continue;  // (a split of fewer than 32 positions)
          const float us = time(n.k, 1, splits);
          CK(cudaMemsetAsync(s.out, 0, (size_t)HQ * HD * 4, st));
          n.k(0, 1, splits, s.out);
          CK(cudaDeviceSynchronize());
          printf("%-6s %6d %5d %6d %10.2f %7.0f GB/s %10.2e\n", n.name, 1, depth, splits, us, bytes / us / 1e3,
                 diff(1));
        }
  }
  for (int depth : {0, 8192, 32512}) {  // a 256-row chunk from position `depth`
    if (only_depth || only == "mmafold") break;  // (mmafold has no chunk form of its own)
    CK(cudaMemcpy(s.pos, &depth, 4, cudaMemcpyHostToDevice));
    warp_kernel(0, maxrows, 1, s.ref);
    CK(cudaDeviceSynchronize());
    const double flops = 4.0 * maxrows * HQ * (depth + maxrows / 2.0) * HD;
    for (const Named& n : kernels)
      if (only.empty() || only == n.name)
        for (int splits : {1, 4, 16}) {
          if (std::string(n.name) != "mma" && depth == 32512 && splits == 1) continue;  // (seconds)
          if (std::string(n.name) == "mmafold") continue;                               // (a chunk's is mma's)
          const float us = time(n.k, maxrows, splits);
          n.k(0, maxrows, splits, s.out);
          CK(cudaDeviceSynchronize());
          printf("%-6s %6d %5d %6d %10.2f %6.1f TFLOPS %9.2e\n", n.name, maxrows, depth, splits, us, flops / us / 1e6,
                 diff(maxrows));
        }
  }
  return 0;
}
