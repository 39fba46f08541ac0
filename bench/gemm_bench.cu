// The prefill GEMMs alone (issue #18's and #16's prefill goals): the lane's int8 tiled GEMMs (lk_quantize_i8 then
// lk_gemm_i8tb / lk_gemm_i8t, gemm_tile's path) against gemm_half's (lk_half_rows then lk_gemm_h), on random matrices
// at the 8B's shapes in Q4_K, Q6_K and Q8_0, for chunks of 256 and 512 rows; the matrices rotated through more bytes
// than L2 holds. Each variant's outputs are judged against the dequant numerics' GEMM in f64 (a thread an output).
// Prints, a shape and variant a line: microseconds for the pair (the activations' prologue and the GEMM), the GEMM's
// TFLOPS, and its relative L2 error.
//
// build: nvcc -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a -o gemm_bench bench/gemm_bench.cu (sm_90a: the
// wgmma variants; lk_gemm_w traps on a plain sm_90 build)     run: ./gemm_bench
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

typedef float lk_act;
typedef float lk_acc;
#define LK_INT8 1
#define LK_KV 0
#define LK_WITH_GEMM_HALF 1
// clang-format off
#include "../kernels/prelude.cuh"
#include "../kernels/shapes.cuh"
#include "../kernels/async.cuh"
#include "../kernels/formats.cuh"
#include "../kernels/norm.cuh"
#include "../kernels/kv.cuh"
#include "../kernels/rope.cuh"
#include "../kernels/gemv.cuh"
#include "../kernels/gemm.cuh"
#include "../kernels/gemm_blocks.cuh"
#include "../kernels/gemm_half.cuh"
#include "../kernels/gemm_wgmma.cuh"
// clang-format on
#include "bench_cuda.cuh"

#define LK_Q8_0 8

// The dequant numerics' y = W x, in f64: a thread an output row, blockIdx.y the activation row.
template <class W>
__global__ void ref_gemm(W w, const float* x, double* y, int k, int n) {
  using F = lk_fmt<W>;
  const int o = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
  if (o >= n) return;
  double s = 0;
  for (int u = 0; u < k / F::E; ++u) {
    float v[F::E];
    F::expand(F::load(w, o, k, u), v);
    for (int e = 0; e < F::E; ++e) s += (double)v[e] * x[(size_t)r * k + u * F::E + e];
  }
  y[(size_t)r * n + o] = s;
}

// A Q8_0 matrix's copies: random codes, small f16 scales.
static std::vector<lk_q8> make_q8(int n, int k, int copies) {
  std::vector<lk_q8> out;
  for (int c = 0; c < copies; ++c) {
    std::vector<signed char> q((size_t)n * k);
    for (auto& v : q) v = (signed char)((int)(rng() % 255) - 127);
    std::vector<__half> s((size_t)n * k / 32);
    for (auto& v : s) v = __float2half(0.002f + 0.001f * (float)(rng() % 1000) / 1000.f);
    signed char* dq;
    __half* ds;
    CK(cudaMalloc(&dq, q.size()));
    CK(cudaMalloc(&ds, s.size() * 2));
    CK(cudaMemcpy(dq, q.data(), q.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ds, s.data(), s.size() * 2, cudaMemcpyHostToDevice));
    out.push_back({dq, ds});
  }
  return out;
}

struct Shape {
  const char* name;
  int type, n, k;
  bool glu;
};

using Pair = std::function<void(int c, cudaStream_t)>;

// Median microseconds of `pair` over the copies, 20 a graph.
static double time_pairs(cudaStream_t s, int copies, const Pair& pair) {
  return graph_us(s, 20, [&] {
    for (int i = 0; i < 20; ++i) pair(i % copies, s);
  });
}

template <class W>
static void run_shape(const Shape& sh, int rows, const std::vector<W>& mats, cudaStream_t s, const float* x, __half* xh,
                      int* xq, float* y, double* yref, int sms, float* part, int* count) {
  const int n = sh.n, k = sh.k, copies = (int)mats.size();
  const int mt = sh.glu ? 2 : 1;
  // The judge: the dequant GEMM of copy 0 (and under GLU copy 1 as up), silu(gate) up on the host.
  std::vector<double> ref((size_t)rows * n);
  {
    std::vector<double> g((size_t)rows * n), u;
    ref_gemm<W><<<dim3((n + 127) / 128, rows), 128, 0, s>>>(mats[0], x, yref, k, n);
    CK(cudaMemcpyAsync(g.data(), yref, g.size() * 8, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (sh.glu) {
      u.resize(g.size());
      ref_gemm<W><<<dim3((n + 127) / 128, rows), 128, 0, s>>>(mats[1 % copies], x, yref, k, n);
      CK(cudaMemcpyAsync(u.data(), yref, u.size() * 8, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
    }
    for (size_t i = 0; i < g.size(); ++i) ref[i] = sh.glu ? g[i] / (1.0 + std::exp(-g[i])) * u[i] : g[i];
  }
  const double flops = 2.0 * mt * n * (double)k * rows;
  std::vector<std::pair<std::string, Pair>> vs;
  // gemm_tile's path as the lowering sizes it (tiled_gemm): BN 128 for GLU (one word), else 64; halved while the
  // grid would give the GPU fewer than a block an SM.
  {
    const int out_rows = lk_gemm_i8t_outputs(sh.glu), least = sh.glu ? 64 : 32;
    int bn = sh.glu ? 128 : 64;
    while (bn > least && ((n + out_rows - 1) / out_rows) * ((rows + bn - 1) / bn) < sms) bn /= 2;
    const dim3 grid((n + out_rows - 1) / out_rows, (rows + bn - 1) / bn);
    auto quant = [=](cudaStream_t st) {
      launch_ex(lk_quantize_i8<false>, dim3((k + 255) / 256, rows), dim3(64), 0, st, x, xq, k, rows);
    };
    auto add = [&](auto kernel, size_t smem) {
      vs.emplace_back("int8 tiled bn" + std::to_string(bn), [=, &mats](int c, cudaStream_t st) {
        quant(st);
        launch_ex(kernel, grid, dim3(128), smem, st, mats[c], mats[(c + 1) % copies], (const int*)xq,
                  (const float*)nullptr, y, k, n, rows);
      });
    };
    if constexpr (std::is_same_v<W, lk_q8>) {
      const size_t smem = lk_gemm_i8t_smem(1, bn);
      if (sh.glu)
        add(bn == 128 ? lk_gemm_i8t<true, 128> : lk_gemm_i8t<true, 64>, smem);
      else
        add(bn == 64 ? lk_gemm_i8t<false, 64> : lk_gemm_i8t<false, 32>, smem);
    } else {
      constexpr int T = lk_blk_type<W>::value;
      const size_t smem = lk_gemm_i8tb_smem(1, bn);
      if (sh.glu)
        add(bn == 128 ? lk_gemm_i8tb<T, true, 128> : lk_gemm_i8tb<T, true, 64>, smem);
      else
        add(bn == 64 ? lk_gemm_i8tb<T, false, 64> : lk_gemm_i8tb<T, false, 32>, smem);
    }
  }
  // gemm_half's GEMM, split `split` ways along k (0: as the lanes split it, lk_gemm_h_split).
  auto half = [&](auto kernel, int bn, int bm, int split) {
    const int out_rows = lk_gemm_h_outputs(sh.glu, bm);
    const long tiles = (long)((n + out_rows - 1) / out_rows) * ((rows + bn - 1) / bn);
    const int auto_split = lk_gemm_h_split(tiles, lk_gemm_h_stages(k, bm), sms * (bm * bn <= 64 * 64 ? 2 : 1));
    const int z = split ? split : auto_split;
    const dim3 grid((n + out_rows - 1) / out_rows, (rows + bn - 1) / bn, z);
    const size_t smem = lk_gemm_h_smem(bm, bn);
    const std::string name =
        "half bm" + std::to_string(bm) + " bn" + std::to_string(bn) + " s" + std::to_string(z) + (split ? "" : "*");
    vs.emplace_back(name, [=, &mats](int c, cudaStream_t st) {
      const size_t total = (size_t)rows * k;
      launch_ex(lk_half_rows, dim3((unsigned)((total / 8 + 255) / 256)), dim3(256), 0, st, x, xh, (int)total);
      launch_ex(kernel, grid, dim3(LK_GH_WARPS * 32), smem, st, mats[c], mats[(c + 1) % copies], (const __half*)xh,
                (const float*)nullptr, y, k, n, rows, part, count, (__half*)nullptr);
    });
  };
  // (the lanes' choice first, marked *: BM 128, BN 128 under GLU, else BM 64, BN 128, split as lk_gemm_h_split says;
  // then other splits)
  if (sh.glu) {
    half(lk_gemm_h<W, true, 128, 128>, 128, 128, 0);
    half(lk_gemm_h<W, true, 128, 128>, 128, 128, 1);
    half(lk_gemm_h<W, true, 256, 128>, 256, 128, 1);
  } else {
    half(lk_gemm_h<W, false, 128, 64>, 128, 64, 0);
    for (int z : {1, 2, 4, 8}) half(lk_gemm_h<W, false, 128, 64>, 128, 64, z);
    half(lk_gemm_h<W, false, 64, 64>, 64, 64, 0);
    half(lk_gemm_h<W, false, 64, 128>, 64, 128, 1);
  }
  // gemm_wgmma's GEMM (wgs warpgroups a block, 64 wgs weight rows by bn activation rows, ks of k a stage), split
  // `split` ways along k (0: lk_gemm_h_split's choice for its tiles).
  auto wg = [&](auto kernel, int bn, int wgs, int ks, int split) {
    const int out_rows = lk_gemm_w_outputs(sh.glu, wgs);
    const long tiles = (long)((n + out_rows - 1) / out_rows) * ((rows + bn - 1) / bn);
    const int z = split ? split : lk_gemm_h_split(tiles, (k + ks - 1) / ks, sms * lk_gemm_w_blocks(bn, wgs, ks));
    const dim3 grid((n + out_rows - 1) / out_rows, (rows + bn - 1) / bn, z);
    const size_t smem = lk_gemm_w_smem(bn, wgs, ks);
    const std::string name = "wgmma" + std::to_string(wgs) + " bn" + std::to_string(bn) + " k" + std::to_string(ks) +
                             " s" + std::to_string(z) + (split ? "" : "*");
    vs.emplace_back(name, [=, &mats](int c, cudaStream_t st) {
      const size_t total = (size_t)rows * k;
      launch_ex(lk_half_rows, dim3((unsigned)((total / 8 + 255) / 256)), dim3(256), 0, st, x, xh, (int)total);
      launch_ex(kernel, grid, dim3(128 * wgs), smem, st, mats[c], mats[(c + 1) % copies], (const __half*)xh,
                (const float*)nullptr, y, k, n, rows, part, count, (__half*)nullptr);
    });
  };
  // (the lanes' since session 46: 256 activation rows by 64 of k for the fused gate/up and rows of k 8,192 or more,
  // 128 by 128 for the others; lk_gemm_h where half_gemm_shape keeps it)
  if (sh.glu) {
    wg(lk_gemm_w<W, true, 128, 2, 64>, 128, 2, 64, 1);
    wg(lk_gemm_w<W, true, 128, 2, 128>, 128, 2, 128, 1);
    wg(lk_gemm_w<W, true, 64, 2, 128>, 64, 2, 128, 1);
    wg(lk_gemm_w<W, true, 256, 2, 64>, 256, 2, 64, 1);
    wg(lk_gemm_w<W, true, 256, 2, 64>, 256, 2, 64, 0);
  } else {
    wg(lk_gemm_w<W, false, 128, 2, 64>, 128, 2, 64, 0);
    wg(lk_gemm_w<W, false, 128, 2, 128>, 128, 2, 128, 0);
    wg(lk_gemm_w<W, false, 128, 2, 128>, 128, 2, 128, 1);
    wg(lk_gemm_w<W, false, 64, 2, 128>, 64, 2, 128, 0);
    wg(lk_gemm_w<W, false, 256, 2, 64>, 256, 2, 64, 0);
  }
  const char* only = getenv("GB_VARIANT");  // (a variant's name to run alone, e.g. under ncu)
  for (auto& [name, pair] : vs) {
    if (only && name != only) continue;
    CK(cudaMemsetAsync(y, 0, sizeof(float) * rows * n, s));
    pair(0, s);
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    std::vector<float> h((size_t)rows * n);
    CK(cudaMemcpy(h.data(), y, h.size() * 4, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (size_t i = 0; i < h.size(); ++i) num += (h[i] - ref[i]) * (h[i] - ref[i]), den += ref[i] * ref[i];
    const double us = time_pairs(s, copies, pair);
    printf("%-26s %5d %-16s %9.1f %8.1f %10.2e\n", sh.name, rows, name.c_str(), us, flops / (us * 1e-6) / 1e12,
           std::sqrt(num / den));
    fflush(stdout);
  }
}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int rmax = 512, kmax = 14336, nmax = 14336;
  float *x, *y;
  __half* xh;
  int* xq;
  double* yref;
  CK(cudaMalloc(&x, sizeof(float) * rmax * kmax));
  CK(cudaMalloc(&xh, sizeof(__half) * rmax * kmax));
  CK(cudaMalloc(&xq, (size_t)rmax * kmax * 2));
  CK(cudaMalloc(&y, sizeof(float) * rmax * nmax));
  CK(cudaMalloc(&yref, sizeof(double) * rmax * nmax));
  // gemm_half's split workspace and counts (the counts zero; each launch's last parts reset theirs)
  float* part;
  int* count;
  CK(cudaMalloc(&part, sizeof(float) * 8 * rmax * nmax));
  CK(cudaMalloc(&count, sizeof(int) * 65536));
  CK(cudaMemset(count, 0, sizeof(int) * 65536));
  {
    std::vector<float> h((size_t)rmax * kmax);
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& v : h) v = nd(rng);
    CK(cudaMemcpy(x, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  }
  const Shape shapes[] = {
      {"q    4096x4096 q4_k", LK_Q4_K, 4096, 4096, false},   {"k    1024x4096 q4_k", LK_Q4_K, 1024, 4096, false},
      {"v    1024x4096 q6_k", LK_Q6_K, 1024, 4096, false},   {"gate+up 2x14336x4096 q4_k", LK_Q4_K, 14336, 4096, true},
      {"down 4096x14336 q4_k", LK_Q4_K, 4096, 14336, false}, {"down 4096x14336 q6_k", LK_Q6_K, 4096, 14336, false},
      {"q    4096x4096 q8_0", LK_Q8_0, 4096, 4096, false},   {"gate+up 2x14336x4096 q8_0", LK_Q8_0, 14336, 4096, true},
      {"down 4096x14336 q8_0", LK_Q8_0, 4096, 14336, false},
      // qwen3-0.6b's (d 1024): every one narrow or short
      {"0.6b q 2048x1024 q8_0", LK_Q8_0, 2048, 1024, false}, {"0.6b k 1024x1024 q8_0", LK_Q8_0, 1024, 1024, false},
      {"0.6b gate+up 2x3072x1024 q8_0", LK_Q8_0, 3072, 1024, true},
      {"0.6b down 1024x3072 q8_0", LK_Q8_0, 1024, 3072, false},
      // (its Q4_K_M file's: the gate/up the lanes put on lk_gemm_w at 512 rows, 96 blocks; session 47 measured the
      // lane 1.009x over lk_gemm_h's 192, where the Q8_0 bench gave 1.33x)
      {"0.6b gate+up 2x3072x1024 q4_k", LK_Q4_K, 3072, 1024, true},
      {"0.6b down 1024x3072 q6_k", LK_Q6_K, 1024, 3072, false},
  };
  printf("%-26s %5s %-16s %9s %8s %10s\n", "shape", "rows", "variant", "us/pair", "TFLOPS", "rel_l2");
  const char* shape_only = getenv("GB_SHAPE");  // (a substring of the shapes' names to run)
  const int rows_only = getenv("GB_ROWS") ? atoi(getenv("GB_ROWS")) : 0;
  for (const Shape& sh : shapes) {
    if (shape_only && !strstr(sh.name, shape_only)) continue;
    for (int rows : {256, 512}) {
      if (rows_only && rows != rows_only) continue;
      if (sh.type == LK_Q8_0) {
        const double one = (double)sh.n * sh.k * 34 / 32;
        const int copies = (int)std::max(2.0, std::min(8.0, 120e6 / one + 1));
        std::vector<lk_q8> m = make_q8(sh.n, sh.k, copies);
        run_shape<lk_q8>(sh, rows, m, s, x, xh, xq, y, yref, sms, part, count);
        for (auto& q : m) cudaFree((void*)q.q), cudaFree((void*)q.s);
        continue;
      }
      Mat m0{sh.type, sh.n, sh.k, {}};
      const int copies = (int)std::max<size_t>(2, std::min<size_t>(8, (size_t)120e6 / m0.bytes() + 1));
      Mat m = make(sh.type, sh.n, sh.k, copies);
      auto go = [&](auto tag) {
        constexpr int T = decltype(tag)::value;
        std::vector<lk_blk<T>> v;
        for (int c = 0; c < copies; ++c) v.push_back(view<T>(m, c));
        run_shape<lk_blk<T>>(sh, rows, v, s, x, xh, xq, y, yref, sms, part, count);
      };
      if (sh.type == LK_Q4_K)
        go(std::integral_constant<int, LK_Q4_K>());
      else
        go(std::integral_constant<int, LK_Q6_K>());
      for (int p = 0; p < 4; ++p)
        for (void* d : m.planes[p]) cudaFree(d);
    }
  }
  return 0;
}
