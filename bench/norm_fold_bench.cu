// The decode norm folded into the GEMV before it (norm_fold, bench/NOTES.md session 36; issue #18): under the int8
// numerics the norm's scale s = 1 / sqrt(mean(x^2) + eps) factors out of the quantized copy (a 32-block's codes of
// x * w * s are those of x * w; its scale is s times theirs), so the producer GEMV (the o or down projection) can end
// in an epilogue a span of 128 values (the library's lk_gemv_fold): the last of the span's blocks to finish adds the
// span's rows into the residual, writes the codes of x * w with their unscaled scales and the span's sum of squares;
// the consumer GEMV (here a gate-sized plain lk_gemv over an lk_xq naming the spans) sums the 32-groups' sums in a
// fixed order after its own sums and multiplies each row's sum by s (lk_xq_scale). C: the same in blocks of one
// 32-group of rows (lk_gemv_fold_group, norm_fold_groups: no counter or fence; the same numbers as B). The fold's
// kernels alone, beside the lane's A/B/C (bench/calls/s37_norm_fold_lane.sh).
//
// A, the lane's sequence today: lk_gemv (o, Q4_K 4,096 x 4,096) -> lk_add_rmsnorm<true, true, 1> (1,024 threads: x +=
// y, h = norm(x) * w and its int8 copy) -> lk_gemv (gate-sized, Q4_K 14,336 x 4,096, over the copy); B the folded
// pair; "A w/o norm" the two GEMVs alone (what the norm's launch costs in the chain). All under programmatic dependent
// launch in a CUDA graph of 64 repetitions, the matrices rotated through more bytes than L2 holds. Checks first: the
// residual bit for bit, the copy's codes (a code may differ by one where x * w * s and x * w round apart) and the
// consumer's outputs (relative L2).
//
// build: nvcc -O3 -std=c++20 -arch=sm_90 -o norm_fold_bench bench/norm_fold_bench.cu
// run: ./norm_fold_bench [D FFN]   (default 4096 14336: llama-3.1-8b; 1024 3072 for qwen3-0.6b)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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

constexpr int kSpan = LK_NORM_SPAN;

static std::vector<float> host(const float* d, size_t n) {
  std::vector<float> h(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

int main(int argc, char** argv) {
  const int d = argc > 2 ? atoi(argv[1]) : 4096, ffn = argc > 2 ? atoi(argv[2]) : 14336;
  if (d % kSpan != 0 || d < kSpan) {
    fprintf(stderr, "D must be a multiple of %d\n", kSpan);
    return 2;
  }
  const float eps = 1e-5f;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  const int pc = 4, cc = 3;  // copies: o 4 x 9.4 MB, gate 3 x 33 MB at the 8B's shapes (past L2's 50 MB)
  const Mat o = make(LK_Q4_K, d, d, pc), gate = make(LK_Q4_K, ffn, d, cc);
  std::mt19937_64 g(11);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto dev = [&](size_t n, float mean, float sd) {
    std::vector<float> h(n);
    for (auto& v : h) v = mean + sd * nd(g);
    float* p;
    CK(cudaMalloc(&p, n * sizeof(float)));
    CK(cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    return p;
  };
  float *x0 = dev(d, 0.f, 1.f), *res0 = dev(d, 0.f, 1.f), *w = dev(d, 1.f, 0.2f);
  float *res, *y, *h, *z, *ss;
  int *xin, *xq;
  CK(cudaMalloc(&res, d * sizeof(float)));
  CK(cudaMalloc(&y, d * sizeof(float)));
  CK(cudaMalloc(&h, d * sizeof(float)));
  CK(cudaMalloc(&z, ffn * sizeof(float)));
  CK(cudaMalloc(&ss, d / 32 * sizeof(float)));  // (a sum of squares a 32-group)
  CK(cudaMalloc(&xin, d + d / 32 * 4));
  CK(cudaMalloc(&xq, d + d / 32 * 4));
  launch(lk_quantize_i8<false>, (d / 4 + 63) / 64, 64, s, (const float*)x0, xin, d, 1);
  const lk_xq in{xin, 1, 0}, copy{xq, 1, 0}, scaled{xq, 1, 0, ss, eps};

  auto today = [&](int i, bool norm) {
    launch(lk_gemv<lk_blk<LK_Q4_K>, 1, 1, lk_xq>, d / 8, 256, s, view<LK_Q4_K>(o, i % pc), in, (const float*)nullptr,
           y, d, d);
    if (norm)  // (as the lowering launches it: a float4 of the row a thread, 256 to 1,024 threads)
      launch(lk_add_rmsnorm<true, true, 1>, 1, std::clamp((d / 4 + 31) / 32 * 32, 256, 1024), s, res, (const float*)y,
             (const float*)w, h, d, eps, xq);
    launch(lk_gemv<lk_blk<LK_Q4_K>, 1, 1, lk_xq>, ffn / 8, 256, s, view<LK_Q4_K>(gate, i % cc), copy,
           (const float*)nullptr, z, d, ffn);
  };
  auto folded = [&](int i) {
    launch(lk_gemv_fold<lk_blk<LK_Q4_K>, 1, lk_xq>, d / 8, 256, s, view<LK_Q4_K>(o, i % pc), in, (const float*)nullptr,
           y, d, d, lk_norm_tail{res, w, nullptr, d, eps}, xq, ss);
    launch(lk_gemv<lk_blk<LK_Q4_K>, 1, 1, lk_xq>, ffn / 8, 256, s, view<LK_Q4_K>(gate, i % cc), scaled,
           (const float*)nullptr, z, d, ffn);
  };
  auto grouped = [&](int i) {  // (norm_fold_groups: a block of 1,024 threads a 32-group of rows)
    launch(lk_gemv_fold_group<lk_blk<LK_Q4_K>, 1, lk_xq>, d / 32, 1024, s, view<LK_Q4_K>(o, i % pc), in,
           (const float*)nullptr, y, d, d, lk_norm_tail{res, w, nullptr, d, eps}, xq, ss);
    launch(lk_gemv<lk_blk<LK_Q4_K>, 1, 1, lk_xq>, ffn / 8, 256, s, view<LK_Q4_K>(gate, i % cc), scaled,
           (const float*)nullptr, z, d, ffn);
  };

  // Checks: one repetition of each from the same residual.
  auto reset = [&] { CK(cudaMemcpyAsync(res, res0, d * sizeof(float), cudaMemcpyDeviceToDevice, s)); };
  reset();
  today(0, true);
  CK(cudaStreamSynchronize(s));
  const std::vector<float> res_a = host(res, d), z_a = host(z, ffn);
  std::vector<int> q_a(d / 4);
  CK(cudaMemcpy(q_a.data(), xq, d, cudaMemcpyDeviceToHost));
  reset();
  folded(0);
  CK(cudaStreamSynchronize(s));
  const std::vector<float> res_b = host(res, d), z_b = host(z, ffn);
  std::vector<int> q_b(d / 4);
  CK(cudaMemcpy(q_b.data(), xq, d, cudaMemcpyDeviceToHost));
  const bool res_equal = std::memcmp(res_a.data(), res_b.data(), d * sizeof(float)) == 0;
  reset();
  grouped(0);
  CK(cudaStreamSynchronize(s));
  const std::vector<float> res_c = host(res, d), z_c = host(z, ffn);
  std::vector<int> q_c(d / 4);
  CK(cudaMemcpy(q_c.data(), xq, d, cudaMemcpyDeviceToHost));
  const bool c_equal = std::memcmp(res_b.data(), res_c.data(), d * sizeof(float)) == 0 && q_b == q_c &&
                       std::memcmp(z_b.data(), z_c.data(), ffn * sizeof(float)) == 0;
  int codes_apart = 0, codes_far = 0;
  for (int i = 0; i < d; ++i) {
    const int a = (signed char)(q_a[i / 4] >> (8 * (i % 4))), b = (signed char)(q_b[i / 4] >> (8 * (i % 4)));
    codes_apart += a != b;
    codes_far += std::abs(a - b) > 1;
  }
  double num = 0, den = 0;
  for (int i = 0; i < ffn; ++i) num += (double)(z_a[i] - z_b[i]) * (z_a[i] - z_b[i]), den += (double)z_a[i] * z_a[i];
  const double rel = std::sqrt(num / std::max(den, 1e-300));
  printf("checks (d %d, ffn %d): residual %s; codes differing %d of %d (%d by more than one); consumer rel L2 %.3e; "
         "C's residual, codes and outputs %s B's\n",
         d, ffn, res_equal ? "bit for bit" : "DIFFERS", codes_apart, d, codes_far, rel, c_equal ? "equal to" : "DIFFER from");
  const bool ok = res_equal && codes_far == 0 && rel < 1e-2 && c_equal;

  const int per = 64;
  reset();
  const double a = graph_us(s, per, [&] {
    for (int i = 0; i < per; ++i) today(i, true);
  });
  reset();
  const double a0 = graph_us(s, per, [&] {
    for (int i = 0; i < per; ++i) today(i, false);
  });
  reset();
  const double b = graph_us(s, per, [&] {
    for (int i = 0; i < per; ++i) folded(i);
  });
  reset();
  const double c = graph_us(s, per, [&] {
    for (int i = 0; i < per; ++i) grouped(i);
  });
  printf("%-34s %9s %8s\n", "sequence", "us", "vs A");
  printf("%-34s %9.2f %8.3f\n", "A: gemv, add_norm, gemv", a, 1.0);
  printf("%-34s %9.2f %8.3f\n", "A w/o norm: the two GEMVs", a0, a0 / a);
  printf("%-34s %9.2f %8.3f\n", "B: folded gemv, scaled gemv", b, b / a);
  printf("%-34s %9.2f %8.3f\n", "C: B in blocks of a 32-group", c, c / a);
  printf("norm_fold %s: B saves %.2f us, C %.2f, of the norm launch's %.2f a pair\n", ok ? "ok" : "WRONG", a - b, a - c,
         a - a0);
  return ok ? 0 : 1;
}
