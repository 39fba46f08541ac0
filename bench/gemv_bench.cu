// The decode GEMVs of the block formats alone (issue #16's decode goal): the lane's kernels from kernels/*.cuh and
// variants of them, on matrices at the 8B's shapes with random codes, each launch after a small kernel as in a decode
// step (the activations' quantization), both under programmatic dependent launch in a CUDA graph, the matrices rotated
// through more bytes than L2 holds. Prints, a variant and shape a line: microseconds a GEMV (the pair's time less the
// small kernel's alone), the matrix's bytes over that time, and whether its outputs equal the lane's kernel's bit for
// bit (every variant sums a lane's units in the same order, so they must).
//
// build: nvcc -O3 -std=c++20 -arch=sm_90 -o gemv_bench bench/gemv_bench.cu [-DLK_GEMV_AHEAD=N]     run: ./gemv_bench
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
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

// ---- variants

// The lane's lk_gemv with the warp's rows asked of L2 before the wait on the launch before (PF 1), and also the next
// launch let go before that wait (PF 2).
LK_DEVICE void bv_prefetch_line(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}
LK_DEVICE void bv_prefetch_span(const void* p, size_t bytes, int lane) {
  const char* c = static_cast<const char*>(p);
  const size_t base = reinterpret_cast<size_t>(c) & ~size_t(127);
  const size_t end = reinterpret_cast<size_t>(c) + bytes;
  for (size_t a = base + (size_t)lane * 128; a < end; a += 32 * 128)
    bv_prefetch_line(reinterpret_cast<const void*>(a > (size_t)c ? a : (size_t)c));
}
template <int T>
LK_DEVICE void bv_prefetch_rows(const lk_blk<T>& m, int k, int n, int row0, int rows) {
  const int lane = threadIdx.x & 31;
  rows = min(rows, n - row0);
  if (rows <= 0) return;
  const size_t r0 = (size_t)row0, e = (size_t)k * rows, e0 = r0 * k;
  bv_prefetch_span(m.q + lk_plane_bytes(T, 0, e0), lk_plane_bytes(T, 0, e), lane);
  if (lk_plane_bytes(T, 1, 256)) bv_prefetch_span(m.h + lk_plane_bytes(T, 1, e0), lk_plane_bytes(T, 1, e), lane);
  bv_prefetch_span(m.s + lk_plane_bytes(T, 2, e0), lk_plane_bytes(T, 2, e), lane);
  if (lk_plane_bytes(T, 3, 256))
    bv_prefetch_span(reinterpret_cast<const char*>(m.d) + lk_plane_bytes(T, 3, e0), lk_plane_bytes(T, 3, e), lane);
}

template <class M, int RPW, int PF, int MINB>
__global__ void __launch_bounds__(256, MINB) bv_gemv(M m, lk_xq x, float* __restrict__ y, int k, int n) {
  const int row0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * RPW;
  if constexpr (PF > 0) bv_prefetch_rows(m, k, n, row0, RPW);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (PF == 2) asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
  lk_pdl_entry();
  if (row0 >= n) return;
  lk_acc acc[RPW][1];
  lk_gemv_sums<M, RPW, 1>(m, x, k, n, row0, acc);
  lk_gemv_store<RPW, 1>(acc, nullptr, y, n, row0);
}

// Q4_K with the 256-block's header a word a lane (lanes 8s .. 8s + 3 load words 0..3 of their block; the unit's four
// words by shuffles): 5 registers a unit in flight instead of 8, so AH units a lane in flight for the same registers.
template <int RPW, int AH, int PF>
__global__ void __launch_bounds__(256) bv_gemv_q4k(lk_blk<LK_Q4_K> m, lk_xq x, float* __restrict__ y, int k, int n) {
  using F = lk_fmt<lk_blk<LK_Q4_K>>;
  const int row0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * RPW;
  if constexpr (PF > 0) bv_prefetch_rows(m, k, n, row0, RPW);
  lk_pdl_entry();
  if (row0 >= n) return;
  const int lane = threadIdx.x & 31, units = k / 32;
  lk_acc acc[RPW][1];
#pragma unroll
  for (int i = 0; i < RPW; ++i) acc[i][0] = 0;
  for (int u0 = lane; u0 - lane < units; u0 += 32 * AH) {
    int4 q[AH][RPW];
    unsigned hw[AH][RPW];
#pragma unroll
    for (int j = 0; j < AH; ++j)
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        const int u = u0 + 32 * j;
        const size_t row = (size_t)min(row0 + i, n - 1);
        if (u < units) {
          const size_t g = row * units + u;
          q[j][i] = __ldg(reinterpret_cast<const int4*>(m.q) + g);
          hw[j][i] = __ldg(reinterpret_cast<const unsigned*>(m.s) + (g / 8) * 4 + (lane & 3));
        } else {
          q[j][i] = make_int4(0, 0, 0, 0);
          hw[j][i] = 0;
        }
      }
#pragma unroll
    for (int j = 0; j < AH; ++j) {
      const int u = u0 + 32 * j;
      if (u - lane >= units) break;  // (uniform)
      typename F::Raw raw[RPW];
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        const int src = lane & ~7;
        raw[i].q = q[j][i];
        raw[i].s.x = (int)__shfl_sync(0xffffffffu, hw[j][i], src);
        raw[i].s.y = (int)__shfl_sync(0xffffffffu, hw[j][i], src | 1);
        raw[i].s.z = (int)__shfl_sync(0xffffffffu, hw[j][i], src | 2);
        raw[i].s.w = (int)__shfl_sync(0xffffffffu, hw[j][i], src | 3);
        raw[i].sub = lane & 7;
      }
      if (u < units) lk_i8b_unit<F, RPW, 1>(x, k, 0, u, raw, acc);
    }
  }
#pragma unroll
  for (int i = 0; i < RPW; ++i) acc[i][0] = lk_warp_sum(acc[i][0]);
  lk_gemv_store<RPW, 1>(acc, nullptr, y, n, row0);
}

// A warp walks rows (RPW at a time, every (warps of the grid)-th group) in rounds of AH units a lane, the next
// round's loads issued before the current round's products: each warp streams its rows' bytes without a gap between
// rows, and the grid is one wave (as many blocks as the SMs hold).
template <class M, int RPW, int AH>
__global__ void __launch_bounds__(256) bv_stream(M m, lk_xq x, float* __restrict__ y, int k, int n) {
  using F = lk_fmt<M>;
  using Raw = typename F::Raw;
  lk_pdl_entry();
  const int lane = threadIdx.x & 31;
  const int warps = gridDim.x * (blockDim.x >> 5), w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int units = k / 32, rounds = (units + 32 * AH - 1) / (32 * AH), groups = (n + RPW - 1) / RPW;
  const int mine = groups > w ? (groups - w + warps - 1) / warps : 0, T = mine * rounds;
  lk_acc acc[RPW][1];
#pragma unroll
  for (int i = 0; i < RPW; ++i) acc[i][0] = 0;
  auto load = [&](int t, Raw(&raw)[AH][RPW]) {
    const int g = w + (t / rounds) * warps, v0 = (t % rounds) * 32 * AH;
#pragma unroll
    for (int j = 0; j < AH; ++j)
#pragma unroll
      for (int i = 0; i < RPW; ++i)
        if (v0 + 32 * j + lane < units) raw[j][i] = F::load_part(m, (size_t)min(g * RPW + i, n - 1), k, v0 + 32 * j + lane);
  };
  auto step = [&](int t, Raw(&cur)[AH][RPW], Raw(&nxt)[AH][RPW]) {
    if (t + 1 < T) load(t + 1, nxt);
    const int v0 = (t % rounds) * 32 * AH;
#pragma unroll
    for (int j = 0; j < AH; ++j) {
      const int v = v0 + 32 * j;
      if (v >= units) break;
#pragma unroll
      for (int i = 0; i < RPW; ++i) F::share(cur[j][i]);
      if (v + lane < units) lk_i8b_unit<F, RPW, 1>(x, k, 0, v + lane, cur[j], acc);
    }
    if (t % rounds == rounds - 1) {
#pragma unroll
      for (int i = 0; i < RPW; ++i) acc[i][0] = lk_warp_sum(acc[i][0]);
      lk_gemv_store<RPW, 1>(acc, nullptr, y, n, (w + (t / rounds) * warps) * RPW);
#pragma unroll
      for (int i = 0; i < RPW; ++i) acc[i][0] = 0;
    }
  };
  Raw b0[AH][RPW], b1[AH][RPW];
  if (T > 0) load(0, b0);
#pragma unroll 1
  for (int t = 0; t < T; t += 2) {
    step(t, b0, b1);
    if (t + 1 < T) step(t + 1, b1, b0);
  }
}

template <class K>
static int wave(K kernel) {
  int sms = 0, per = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, 256, 0));
  return sms * per;
}

// ---- the harness

struct Ctx {
  cudaStream_t s;
  float* x;   // k f32 activations
  int* xq;    // their int8 copy and scales
  float* y;   // outputs
  int kmax;
};

// One decode-like pair: the activations quantized (lk_quantize_i8<false>, one row), then the GEMV of copy c.
using Gemv = std::function<void(int c, cudaStream_t)>;

static double time_graph(Ctx& cx, int k, int copies, const Gemv& g, bool with_gemv) {
  const int pairs = 64;
  return graph_us(cx.s, pairs, [&] {  // us a pair
    for (int i = 0; i < pairs; ++i) {
      launch(lk_quantize_i8<false>, (k / 4 + 63) / 64, 64, cx.s, (const float*)cx.x, cx.xq, k, 1);
      if (with_gemv) g(i % copies, cx.s);
    }
  });
}

int main() {
  Ctx cx{};
  cx.kmax = 14336;
  CK(cudaStreamCreate(&cx.s));
  CK(cudaMalloc(&cx.x, sizeof(float) * cx.kmax));
  CK(cudaMalloc(&cx.xq, cx.kmax * 2 + cx.kmax / 32 * 8));
  CK(cudaMalloc(&cx.y, sizeof(float) * 200000));
  {
    std::vector<float> h(cx.kmax);
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& v : h) v = nd(rng);
    CK(cudaMemcpy(cx.x, h.data(), sizeof(float) * cx.kmax, cudaMemcpyHostToDevice));
  }
  struct Shape {
    const char* name;
    int type, n, k;
    bool glu = false;  // (the pair's bytes: both matrices)
  };
  const Shape shapes[] = {
      {"gate+up 2x14336x4096 q4_k", LK_Q4_K, 14336, 4096, true},
      {"q    4096x4096 q4_k", LK_Q4_K, 4096, 4096},   {"k    1024x4096 q4_k", LK_Q4_K, 1024, 4096},
      {"gate 14336x4096 q4_k", LK_Q4_K, 14336, 4096}, {"down 4096x14336 q4_k", LK_Q4_K, 4096, 14336},
      {"v    1024x4096 q6_k", LK_Q6_K, 1024, 4096},   {"down 4096x14336 q6_k", LK_Q6_K, 4096, 14336},
      {"out  128256x4096 q6_k", LK_Q6_K, 128256, 4096},
  };
  printf("%-24s %-28s %9s %9s %7s %s\n", "shape", "variant", "us/gemv", "GB/s", "of_bw", "bits");
  for (const Shape& sh : shapes) {
    const size_t one = (sh.glu ? 2 : 1) * (lk_plane_bytes(sh.type, 0, (unsigned long long)sh.n * sh.k) +
                                           lk_plane_bytes(sh.type, 1, (unsigned long long)sh.n * sh.k) +
                                           lk_plane_bytes(sh.type, 2, (unsigned long long)sh.n * sh.k) +
                                           lk_plane_bytes(sh.type, 3, (unsigned long long)sh.n * sh.k));
    const int copies = (int)std::max<size_t>(sh.glu ? 3 : 1, std::min<size_t>(16, (size_t)160e6 / one + 1));
    Mat m = make(sh.type, sh.n, sh.k, copies);
    const int k = sh.k, n = sh.n;
    // Quantize once for the correctness comparison.
    launch(lk_quantize_i8<false>, (k / 4 + 63) / 64, 64, cx.s, (const float*)cx.x, cx.xq, k, 1);
    CK(cudaStreamSynchronize(cx.s));
    const double base = time_graph(cx, k, copies, Gemv(), false);
    std::vector<std::pair<std::string, Gemv>> vs;
    auto grid = [&](int rpw, int warps) { return (n / rpw + warps - 1) / warps; };
    auto add = [&](std::string name, Gemv g) { vs.emplace_back(std::move(name), std::move(g)); };
#define BV_ADD_LIB(T)                                                                                                \
  add("lib rpw1", [&](int c, cudaStream_t s) {                                                                       \
    launch(lk_gemv<lk_blk<T>, 1, 1, lk_xq>, grid(1, 8), 256, s, view<T>(m, c), lk_xq{cx.xq}, (const float*)nullptr, \
           cx.y, k, n);                                                                                              \
  });                                                                                                                \
  add("lib rpw2", [&](int c, cudaStream_t s) {                                                                       \
    launch(lk_gemv<lk_blk<T>, 2, 1, lk_xq>, grid(2, 8), 256, s, view<T>(m, c), lk_xq{cx.xq}, (const float*)nullptr, \
           cx.y, k, n);                                                                                              \
  });                                                                                                                \
  add("lib split2 rpw1", [&](int c, cudaStream_t s) {                                                                \
    launch(lk_gemv_split<lk_blk<T>, 1, 1, 2, lk_xq>, (n + 3) / 4, 256, s, view<T>(m, c), lk_xq{cx.xq},              \
           (const float*)nullptr, cx.y, k, n);                                                                       \
  });                                                                                                                \
  add("stream rpw1 ah4", [&](int c, cudaStream_t s) {                                                                \
    launch(bv_stream<lk_blk<T>, 1, 4>, std::min(grid(1, 8), wave(bv_stream<lk_blk<T>, 1, 4>)), 256, s,              \
           view<T>(m, c), lk_xq{cx.xq}, cx.y, k, n);                                                                 \
  });                                                                                                                \
  add("stream rpw1 ah2", [&](int c, cudaStream_t s) {                                                                \
    launch(bv_stream<lk_blk<T>, 1, 2>, std::min(grid(1, 8), wave(bv_stream<lk_blk<T>, 1, 2>)), 256, s,              \
           view<T>(m, c), lk_xq{cx.xq}, cx.y, k, n);                                                                 \
  });                                                                                                                \
  add("stream rpw2 ah2", [&](int c, cudaStream_t s) {                                                                \
    launch(bv_stream<lk_blk<T>, 2, 2>, std::min(grid(2, 8), wave(bv_stream<lk_blk<T>, 2, 2>)), 256, s,              \
           view<T>(m, c), lk_xq{cx.xq}, cx.y, k, n);                                                                 \
  });                                                                                                                \
  add("stream rpw1 ah4 2waves", [&](int c, cudaStream_t s) {                                                         \
    launch(bv_stream<lk_blk<T>, 1, 4>, std::min(grid(1, 8), 2 * wave(bv_stream<lk_blk<T>, 1, 4>)), 256, s,          \
           view<T>(m, c), lk_xq{cx.xq}, cx.y, k, n);                                                                 \
  });
    if (sh.glu) {  // gate and up: copies c and c + 1
      auto glu = [&](auto kernel, int rpw) {
        return [&, kernel, rpw](int c, cudaStream_t s) {
          launch(kernel, grid(rpw, 8), 256, s, view<LK_Q4_K>(m, c), view<LK_Q4_K>(m, (c + 1) % copies), lk_xq{cx.xq},
                 cx.y, k, n);
        };
      };
      add("glu lib rpw1", glu(lk_gemv_glu<lk_blk<LK_Q4_K>, 1, 1, lk_xq>, 1));
      add("glu lib rpw2", glu(lk_gemv_glu<lk_blk<LK_Q4_K>, 2, 1, lk_xq>, 2));
    } else if (sh.type == LK_Q4_K) {
      add("q4k-shfl ah4 rpw1 (s10 c1)", [&](int c, cudaStream_t s) {
        launch(bv_gemv_q4k<1, 4, 0>, grid(1, 8), 256, s, view<LK_Q4_K>(m, c), lk_xq{cx.xq}, cx.y, k, n);
      });
      BV_ADD_LIB(LK_Q4_K)
    } else {
      BV_ADD_LIB(LK_Q6_K)
    }
    std::vector<float> ref;
    for (auto& [name, g] : vs) {
      // Correctness first (one launch, copy 0), against the first variant (the lane's kernel).
      launch(lk_quantize_i8<false>, (k / 4 + 63) / 64, 64, cx.s, (const float*)cx.x, cx.xq, k, 1);
      CK(cudaMemset(cx.y, 0, sizeof(float) * n));
      g(0, cx.s);
      CK(cudaStreamSynchronize(cx.s));
      CK(cudaGetLastError());
      std::vector<float> h(n);
      CK(cudaMemcpy(h.data(), cx.y, sizeof(float) * n, cudaMemcpyDeviceToHost));
      if (ref.empty()) ref = h;
      const bool same = std::memcmp(h.data(), ref.data(), sizeof(float) * n) == 0;
      const double us = time_graph(cx, k, copies, g, true) - base;
      printf("%-24s %-28s %9.2f %9.0f %7s %s\n", sh.name, name.c_str(), us, one / (us * 1e-6) / 1e9, "",
             same ? "equal" : "DIFFER");
      fflush(stdout);
    }
    printf("%-24s %-28s %9.2f  (the quantize kernel alone, a pair; %d copies of %.1f MB)\n", sh.name, "base", base,
           copies, one / 1e6);
    for (int p = 0; p < 4; ++p)
      for (void* d : m.planes[p]) cudaFree(d);
  }
  return 0;
}
