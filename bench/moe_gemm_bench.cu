// A mixture's chunk alone (issue #17's prefill): the pairs grouped by expert (lk_moe_group) and the grouped expert
// GEMMs on the tensor cores (lk_moe_gemm_h, gemm_half), at qwen3-30b-a3b's shapes (Q8_0: 128 experts, 8 a token,
// d 2048, expert ffn 768) and gpt-oss-20b's (MXFP4: 32 experts, 4 a token, d 2880, ffn 2880), for chunks of 512 and
// 256 rows with random distinct experts a row. Variants: the tile's pairs (BN), its weight rows (BM) and the weights'
// stages in flight (P). The grouping is judged against the host's (each expert's pairs ascending);
// every variant's outputs must equal the first's bit for bit (the same sums in the same order); MXFP4's direct f16
// unpacking (lk_mxfp4_half) is checked against the f32 path for every code and exponent first. Prints a line a
// kernel and variant: microseconds (a median over a captured graph of 10 launches), and the rate of the weight bytes
// of the experts the chunk uses.
//
// build: nvcc -O3 -std=c++20 -arch=sm_90 -o moe_gemm_bench bench/moe_gemm_bench.cu     run: ./moe_gemm_bench
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

typedef float lk_act;
typedef float lk_acc;
#define LK_INT8 1
#define LK_KV 0
#define LK_WITH_GEMM_HALF 1
#define LK_WITH_BLOCKS 1
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
#include "../kernels/swiglu.cuh"
#include "../kernels/argmax.cuh"
#include "../kernels/moe.cuh"
// clang-format on
#include "bench_cuda.cuh"

static void* upload(const void* h, size_t bytes) {
  void* d = nullptr;
  CK(cudaMalloc(&d, std::max<size_t>(bytes, 16)));
  CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  return d;
}

// A 3-D expert tensor of `rows` (experts x their rows) by k in the format W: random codes, small scales.
static lk_q8 q8_tensor(size_t rows, int k) {
  std::vector<signed char> q(rows * k);
  for (auto& v : q) v = (signed char)((int)(rng() % 255) - 127);
  std::vector<__half> s(rows * k / 32);
  for (auto& v : s) v = __float2half(0.002f + 0.001f * (float)(rng() % 1000) / 1000.f);
  return {(const signed char*)upload(q.data(), q.size()), (const __half*)upload(s.data(), s.size() * 2)};
}
static lk_blk<LK_MXFP4> mxfp4_tensor(size_t rows, int k) {
  lk_blk<LK_MXFP4> m{};
  const unsigned long long n = (unsigned long long)rows * k;
  const unsigned char** planes[3] = {&m.q, &m.h, &m.s};
  for (int p = 0; p < 3; ++p) {
    const size_t b = lk_plane_bytes(LK_MXFP4, p, n);
    if (!b) continue;
    std::vector<unsigned char> h(b);
    for (auto& c : h) c = (unsigned char)(p == 2 ? 118 + rng() % 8 : rng());  // (exponents near 2^-6)
    *planes[p] = (const unsigned char*)upload(h.data(), b);
  }
  return m;
}

// lk_mxfp4_half against the dequant numerics' f32 values rounded to f16, for every exponent byte (a block's) and every
// code in every element place (a thread's group: byte j holds codes (c + j) and (c + 3 j) mod 16): mismatches
// counted, groups the direct path took counted.
__global__ void mxfp4_half_check(int* mismatches, int* direct) {
  using F = lk_fmt<lk_blk<LK_MXFP4>>;
  const unsigned e = blockIdx.x, c = threadIdx.x;
  F::Raw r{};
  unsigned char* b = reinterpret_cast<unsigned char*>(&r.q);
  for (int j = 0; j < 16; ++j) b[j] = (unsigned char)(((c + j) & 15u) | (((c + 3 * j) & 15u) << 4));
  r.s.x = (int)e;
  __half2 h[16];
  if (!lk_mxfp4_half(r.q, e, h)) return;
  atomicAdd(direct, 1);
  float v[32];
  F::expand(r, v);
  for (int j = 0; j < 32; ++j) {
    const __half want = __float2half_rn(v[j]), got = j % 2 ? __high2half(h[j / 2]) : __low2half(h[j / 2]);
    if (__half_as_ushort(want) != __half_as_ushort(got)) atomicAdd(mismatches, 1);
  }
}

static void check_mxfp4_half() {
  int* d;
  CK(cudaMalloc(&d, 8));
  CK(cudaMemset(d, 0, 8));
  mxfp4_half_check<<<256, 16>>>(d, d + 1);
  int h[2];
  CK(cudaMemcpy(h, d, 8, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  printf("mxfp4 f16 unpacking: %d of its %d groups' values differ from the f32 path's rounded (%s)\n", h[0], h[1],
         h[0] == 0 && h[1] == 40 * 16 ? "equal" : "WRONG");
}

struct Shape {
  const char* name;
  int experts, used, d, ffn;
  double bytes_per_weight;
};

template <class W>
static void run_shape(const Shape& sh, int rows, W gate, W up, W down, cudaStream_t s) {
  const int pairs = rows * sh.used, E = sh.experts, d = sh.d, f = sh.ffn;
  // Each row's experts: distinct, uniformly random.
  std::vector<int> ids(pairs);
  for (int r = 0; r < rows; ++r) {
    std::vector<int> all(E);
    std::iota(all.begin(), all.end(), 0);
    for (int j = 0; j < sh.used; ++j) {
      std::swap(all[j], all[j + rng() % (E - j)]);
      ids[r * sh.used + j] = all[j];
    }
  }
  int* d_ids = (int*)upload(ids.data(), ids.size() * 4);
  int *count, *first, *order, *at;
  CK(cudaMalloc(&count, E * 4));
  CK(cudaMalloc(&first, E * 4));
  CK(cudaMalloc(&order, pairs * 4));
  CK(cudaMalloc(&at, pairs * 4));
  const size_t gsmem = lk_moe_group_smem(E);
  auto group = [&] {
    launch_ex(lk_moe_group, dim3(1), dim3(LK_MOE_GROUP_THREADS), gsmem, s, (const int*)d_ids, pairs, E, count, first,
              order, at);
  };
  group();
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  // The judge: each expert's pairs ascending, the experts in order.
  std::vector<int> h_count(E), h_first(E), h_order(pairs), h_at(pairs), want_order;
  CK(cudaMemcpy(h_count.data(), count, E * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_first.data(), first, E * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_order.data(), order, pairs * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_at.data(), at, pairs * 4, cudaMemcpyDeviceToHost));
  bool grouped = true;
  int used_experts = 0;
  for (int e = 0, pos = 0; e < E; ++e) {
    int n = 0;
    for (int i = 0; i < pairs; ++i)
      if (ids[i] == e) want_order.push_back(i), ++n;
    grouped &= h_count[e] == n && h_first[e] == pos;
    pos += n;
    used_experts += n > 0;
  }
  grouped &= h_order == want_order;
  for (int i = 0; i < pairs; ++i) grouped &= h_order[h_at[i]] == i;
  const double group_us = graph_us(s, 10, [&] {
    for (int i = 0; i < 10; ++i) group();
  });
  printf("%-14s %4d %-22s %9.1f %8s %s\n", sh.name, rows, "moe_group", group_us, "", grouped ? "grouped" : "WRONG");

  // The grouped activations (f16, random) and outputs.
  std::vector<__half> xg((size_t)pairs * std::max(d, f));
  for (auto& v : xg) v = __float2half((float)((int)(rng() % 2001) - 1000) / 1000.f);
  const __half* d_xg = (const __half*)upload(xg.data(), xg.size() * 2);
  float* out;
  CK(cudaMalloc(&out, (size_t)pairs * std::max(d, f) * 4));
  std::vector<float> first_out, h((size_t)pairs * std::max(d, f));
  auto run = [&](const char* kind, const std::string& name, auto kernel, bool glu, int bn, int bm, int n, int k,
                 bool first_variant) {
    const int out_rows = lk_gemm_h_outputs(glu, bm);
    const dim3 grid((n + out_rows - 1) / out_rows, (pairs + bn - 1) / bn + E);
    const size_t smem = lk_gemm_h_smem(bm, bn);
    const lk_glu_act act{nullptr, nullptr, 0.f, 1.f};
    W a = glu ? gate : down, b = glu ? up : down;
    auto once = [&] {
      launch_ex(kernel, grid, dim3(LK_GH_WARPS * 32), smem, s, a, b, d_xg, (const int*)count, (const int*)first, out,
                k, n, E, act, (const float*)nullptr);
    };
    CK(cudaMemsetAsync(out, 0, (size_t)pairs * n * 4, s));
    once();
    CK(cudaStreamSynchronize(s));
    CK(cudaGetLastError());
    CK(cudaMemcpy(h.data(), out, (size_t)pairs * n * 4, cudaMemcpyDeviceToHost));
    h.resize((size_t)pairs * n);
    bool same = true;
    if (first_variant)
      first_out = h;
    else
      same = std::memcmp(h.data(), first_out.data(), h.size() * 4) == 0;
    h.resize((size_t)pairs * std::max(d, f));
    const double us = graph_us(s, 10, [&] {
      for (int i = 0; i < 10; ++i) once();
    });
    const double bytes = (double)used_experts * (glu ? 2.0 : 1.0) * n * k * sh.bytes_per_weight;
    printf("%-14s %4d %-22s %9.1f %8.2f %s\n", sh.name, rows, (std::string(kind) + " " + name).c_str(), us,
           bytes / us / 1e6, first_variant ? "(first)" : same ? "equal" : "DIFFERENT");
    fflush(stdout);
  };
  run("glu", "bn64 bm128 P1", lk_moe_gemm_h<W, true, 64, 128, 1>, true, 64, 128, f, d, true);
  run("glu", "bn64 bm128 P3", lk_moe_gemm_h<W, true, 64, 128, 3>, true, 64, 128, f, d, false);
  run("glu", "bn128 bm128 P1", lk_moe_gemm_h<W, true, 128, 128, 1>, true, 128, 128, f, d, false);
  run("glu", "bn128 bm64 P1", lk_moe_gemm_h<W, true, 128, 64, 1>, true, 128, 64, f, d, false);
  run("glu", "bn64 bm64 P3", lk_moe_gemm_h<W, true, 64, 64, 3>, true, 64, 64, f, d, false);
  run("down", "bn64 bm64 P1", lk_moe_gemm_h<W, false, 64, 64, 1>, false, 64, 64, d, f, true);
  run("down", "bn64 bm128 P1", lk_moe_gemm_h<W, false, 64, 128, 1>, false, 64, 128, d, f, false);
  run("down", "bn64 bm128 P3", lk_moe_gemm_h<W, false, 64, 128, 3>, false, 64, 128, d, f, false);
  run("down", "bn128 bm128 P1", lk_moe_gemm_h<W, false, 128, 128, 1>, false, 128, 128, d, f, false);
  CK(cudaFree(d_ids));
  CK(cudaFree(count));
  CK(cudaFree(first));
  CK(cudaFree(order));
  CK(cudaFree(at));
  CK(cudaFree((void*)d_xg));
  CK(cudaFree(out));
}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  check_mxfp4_half();
  printf("%-14s %4s %-22s %9s %8s %s\n", "shape", "rows", "kernel", "us", "TB/s", "check");
  {
    const Shape q30{"qwen3-30b-a3b", 128, 8, 2048, 768, 34.0 / 32};
    const size_t ef = (size_t)q30.experts * q30.ffn, ed = (size_t)q30.experts * q30.d;
    const lk_q8 g = q8_tensor(ef, q30.d), u = q8_tensor(ef, q30.d), dn = q8_tensor(ed, q30.ffn);
    for (int rows : {512, 256}) run_shape(q30, rows, g, u, dn, s);
  }
  {
    const Shape oss{"gpt-oss-20b", 32, 4, 2880, 2880, 17.0 / 32};
    const size_t ef = (size_t)oss.experts * oss.ffn, ed = (size_t)oss.experts * oss.d;
    const auto g = mxfp4_tensor(ef, oss.d), u = mxfp4_tensor(ef, oss.d), dn = mxfp4_tensor(ed, oss.ffn);
    for (int rows : {512, 256}) run_shape(oss, rows, g, u, dn, s);
  }
  return 0;
}
