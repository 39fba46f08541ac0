// The decode GEMVs of the block formats alone (issue #16's decode goal): the lane's kernels from kernels/*.cuh and
// variants of them, on matrices at the 8B's shapes with random codes, each launch after a small kernel as in a decode
// step (the activations' quantization), both under programmatic dependent launch in a CUDA graph, the matrices rotated
// through more bytes than L2 holds. Prints, a variant and shape a line: microseconds a GEMV (the pair's time less the
// small kernel's alone), the matrix's bytes over that time, and whether its outputs equal the lane's kernel's bit for
// bit (every variant sums a lane's units in the same order, so they must).
//
// build: nvcc -O3 -std=c++20 -arch=sm_90 -o gemv_bench bench/gemv_bench.cu [-DLK_GEMV_AHEAD=N]
// run: [GB_SHAPE=word] [GB_LINK_NS=N] ./gemv_bench [WORDS] (the shapes whose names hold the word; the variants whose
// names hold one of the comma-separated words). GB_LINK_NS: a one-block launch between the quantize and the GEMV that
// spins N ns after its wait, as a decode step's norm or attention (~2-5 us) holds the GEMV's blocks before their wait:
// how much of a matrix its first loads take in a lane-like window (the quantize alone leaves ~1 us), which gemv_bench
// has not seen where lanes and the bench disagreed (session 52: 2 rows a warp 1.035x in the 8B's lane, ~1.00 here).
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

// ---- the block formats' plain decode GEMVs with the activations' int8 copy staged in shared memory by the block,
// after the wait on the launch before (session 32): lk_gemv_sums_i8b's rounds (the same loads, shares and products in
// the same order, so its outputs bit for bit), a unit's codes and scale read from the library's staged row
// (gemv.cuh's lk_xq_stage and lk_xs_unit, which the fused gate/up GEMV takes under glu_stage). Measured: q, down and
// the Q6_K shapes no faster (session 32 call 6); the pair's form is the library's ("glu lib stage").
template <int T, int RPW>
__global__ void __launch_bounds__(256) bv_smx(lk_blk<T> m, lk_xq x, float* __restrict__ y, int k, int n) {
  using F = lk_fmt<lk_blk<T>>;
  constexpr int A = LK_GEMV_AHEAD;
  const int row0 = lk_gemv_row0<RPW>(), lane = threadIdx.x & 31, units = k / 32;
  lk_acc acc[RPW][1];
#pragma unroll
  for (int i = 0; i < RPW; ++i) acc[i][0] = 0;
  for (int v0 = 0; v0 < units; v0 += 32 * A) {
    typename F::Raw raw[A][RPW];
#pragma unroll
    for (int j = 0; j < A; ++j)
#pragma unroll
      for (int i = 0; i < RPW; ++i)
        if (v0 + j * 32 + lane < units) raw[j][i] = F::load_part(m, (size_t)min(row0 + i, n - 1), k, v0 + lane, j * 32);
    if (v0 == 0) {  // (once: the weights' first round in flight; every warp stages, those without rows too)
      lk_pdl_entry_gemv();
      lk_xq_stage(x, k);
    }
#pragma unroll
    for (int j = 0; j < A; ++j) {
      const int v = v0 + j * 32;
      if (v >= units) break;  // (uniform over the warp)
#pragma unroll
      for (int i = 0; i < RPW; ++i) F::share(raw[j][i]);
      if (v + lane < units) {
        int a[8];
        float d;
        lk_xs_unit(units, 0, v + lane, a, d);
#pragma unroll
        for (int i = 0; i < RPW; ++i) acc[i][0] += F::dot(raw[j][i], a, d);
      }
    }
  }
  if (row0 >= n) return;
#pragma unroll
  for (int i = 0; i < RPW; ++i) acc[i][0] = lk_warp_sum(acc[i][0]);
  lk_gemv_store<RPW, 1>(acc, nullptr, y, n, row0);
}

// ---- Q4_K GEMVs whose lanes stage their round's weights by cp.async into their own shared memory slots instead of
// registers (session 31): the same loads (a lane's 16 bytes of codes and one header word a unit, as load_part), the
// same shares and sums in the same order (so the library's results bit for bit), but no register holds a weight in
// flight, so the launch can keep more warps an SM (MINB blocks, 256 threads) and more bytes requested. A lane reads
// back only what it copied itself: no barrier, a per-thread wait. G: the gate/up pair (the joint rounds of
// lk_gemv_sums_i8b2) or one matrix.
template <bool G, int MINB>
__global__ void __launch_bounds__(256, MINB)
    bv_cp_q4k(lk_blk<LK_Q4_K> m0, lk_blk<LK_Q4_K> m1, lk_xq x, float* __restrict__ y, int k, int n) {
  using F = lk_fmt<lk_blk<LK_Q4_K>>;
  constexpr int A = LK_GEMV_AHEAD, M = G ? 2 : 1;
  extern __shared__ __align__(16) unsigned char bv_sm[];
  const int lane = threadIdx.x & 31, row0 = lk_gemv_row0<1>(), units = k / 32;
  if (row0 >= n) return;
  int4* cq = reinterpret_cast<int4*>(bv_sm) + threadIdx.x;  // slot (matrix i, unit j): cq[(i A + j) 256]
  unsigned* cs = reinterpret_cast<unsigned*>(bv_sm + (size_t)M * A * 256 * 16) + threadIdx.x;
  const lk_blk<LK_Q4_K>* mats[2] = {&m0, &m1};
  lk_acc acc[M][1][1];
#pragma unroll
  for (int i = 0; i < M; ++i) acc[i][0][0] = 0;
  for (int v0 = 0; v0 < units; v0 += 32 * A) {
    const int u = v0 + lane;
#pragma unroll
    for (int i = 0; i < M; ++i) {
      const lk_blk<LK_Q4_K>& m = *mats[i];
      const int4* q = reinterpret_cast<const int4*>(m.q) + (size_t)row0 * units + u;
      const unsigned* hw = reinterpret_cast<const unsigned*>(m.s) + (size_t)row0 * (k / 256) * 4 + (u / 8) * 4 + u % 4;
#pragma unroll
      for (int j = 0; j < A; ++j) {
        const bool ok = u + 32 * j < units;
        lk_cp16(cq + (i * A + j) * 256, ok ? (const void*)(q + 32 * j) : (const void*)q, ok);
        lk_cp4(cs + (i * A + j) * 256, ok ? (const void*)(hw + 16 * j) : (const void*)hw, ok);
      }
    }
    lk_cp_commit();
    if (v0 == 0) lk_pdl_entry_gemv();
    lk_cp_wait<0>();
#pragma unroll
    for (int j = 0; j < A; ++j) {
      const int v = v0 + 32 * j;
      if (v >= units) break;  // (uniform over the warp)
      typename F::Raw raw[M][1];
#pragma unroll
      for (int i = 0; i < M; ++i) {
        raw[i][0].q = cq[(i * A + j) * 256];
        raw[i][0].s.x = (int)cs[(i * A + j) * 256];
        raw[i][0].sub = u % 8;
        F::share(raw[i][0]);
      }
      if (v + lane < units)
#pragma unroll
        for (int i = 0; i < M; ++i) lk_i8b_unit<F, 1, 1>(x, k, 0, v + lane, raw[i], acc[i]);
    }
  }
#pragma unroll
  for (int i = 0; i < M; ++i) acc[i][0][0] = lk_warp_sum(acc[i][0][0]);
  if constexpr (G) lk_glu_sums(acc[0], acc[1]);
  lk_gemv_store<1, 1>(acc[0], nullptr, y, n, row0);
}
template <bool G>
static size_t cp_smem() {
  return size_t(G ? 2 : 1) * LK_GEMV_AHEAD * 256 * (16 + 4);
}

// ---- a GEMV whose blocks stream their rows through shared memory by bulk copies (sm_90's cp.async.bulk, completed
// on an mbarrier): a block takes tiles of 8 rows (a warp a row) in turn, each tile's rows in chunks of KC elements
// (every plane's bytes of the 8 rows' chunk: one bulk copy a row and plane), STAGES chunks in flight a block while its
// warps multiply the oldest. The bytes in flight no longer depend on the registers a lane holds or on waves of warps:
// a block keeps STAGES x ~10 KB requested until its last chunk. Each lane sums units lane, lane + 32, ... of its row
// in the library's order, so the sums are the lane's kernel's bit for bit. PF: the first STAGES chunks are requested
// before the wait on the launch before (the weights depend on nothing it writes).

LK_DEVICE unsigned bv_smem(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
LK_DEVICE void bv_bar_init(unsigned long long* b) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bv_smem(b)) : "memory");
}
LK_DEVICE void bv_bar_expect(unsigned long long* b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bv_smem(b)), "r"(bytes) : "memory");
}
LK_DEVICE void bv_bulk(void* dst, const void* src, unsigned bytes, unsigned long long* b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   bv_smem(dst)),
               "l"(src), "r"(bytes), "r"(bv_smem(b))
               : "memory");
}
LK_DEVICE void bv_bar_wait(unsigned long long* b, unsigned phase) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT;\n}\n" ::"r"(
          bv_smem(b)),
      "r"(phase)
      : "memory");
}

// Unit u (of the chunk) of a row whose chunk's planes lie at q, h, s, d in shared memory (Q4_K, Q6_K), as
// lk_fmt::load reads it from global memory; `sub` is the unit's place in its 256-block.
template <int T>
LK_DEVICE typename lk_fmt<lk_blk<T>>::Raw bv_raw(const unsigned char* q, const unsigned char* h, const unsigned char* s,
                                                 const unsigned char* d, int u) {
  typename lk_fmt<lk_blk<T>>::Raw r;
  r.q = reinterpret_cast<const int4*>(q)[u];
  r.sub = u % 8;
  if constexpr (T == LK_Q4_K) r.s = reinterpret_cast<const int4*>(s)[u / 8];
  if constexpr (T == LK_Q6_K) {
    r.h = reinterpret_cast<const uint2*>(h)[u];
    r.s.x = reinterpret_cast<const unsigned short*>(s + (u / 8) * 16)[r.sub];
    r.d = reinterpret_cast<const __half*>(d)[u / 8];
  }
  return r;
}

template <int T, int KC, int STAGES, bool PF>
__global__ void __launch_bounds__(256) bv_bulk_gemv(lk_blk<T> m, lk_xq x, float* __restrict__ y, int k, int n) {
  using F = lk_fmt<lk_blk<T>>;
  constexpr int ROWS = 8;
  extern __shared__ __align__(128) unsigned char sm[];
  __shared__ __align__(8) unsigned long long full[STAGES];
  // A row's chunk in each plane, and a stage: the 8 rows' chunks plane after plane.
  const unsigned pc[4] = {(unsigned)lk_plane_bytes(T, 0, KC), (unsigned)lk_plane_bytes(T, 1, KC),
                          (unsigned)lk_plane_bytes(T, 2, KC), (unsigned)lk_plane_bytes(T, 3, KC)};
  const unsigned stage = ROWS * (pc[0] + pc[1] + pc[2] + pc[3]);
  const unsigned char* base[4] = {m.q, m.h, m.s, reinterpret_cast<const unsigned char*>(m.d)};
  const int chunks = k / KC, tiles = (n + ROWS - 1) / ROWS;
  const int mine = blockIdx.x < tiles ? (tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0, tasks = mine * chunks;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  auto issue = [&](int i) {  // task i (tile i / chunks, chunk i % chunks) into its stage
    const int tile = blockIdx.x + (i / chunks) * gridDim.x, c = i % chunks;
    const int rows = min(ROWS, n - tile * ROWS);
    unsigned long long* b = &full[i % STAGES];
    bv_bar_expect(b, (unsigned)rows * (pc[0] + pc[1] + pc[2] + pc[3]));
    unsigned char* dst = sm + (size_t)(i % STAGES) * stage;
    for (int p = 0; p < 4; ++p) {
      if (!pc[p]) continue;
      const size_t row_bytes = (size_t)pc[p] * chunks;
      for (int r = 0; r < rows; ++r)
        bv_bulk(dst + r * pc[p], base[p] + (size_t)(tile * ROWS + r) * row_bytes + (size_t)c * pc[p], pc[p], b);
      dst += ROWS * pc[p];
    }
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) bv_bar_init(&full[s]);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (PF && threadIdx.x == 0)
    for (int i = 0; i < min(STAGES, tasks); ++i) issue(i);
  lk_pdl_entry();
  if (!PF && threadIdx.x == 0)
    for (int i = 0; i < min(STAGES, tasks); ++i) issue(i);
  lk_acc acc[1][1] = {{0}};
  for (int i = 0; i < tasks; ++i) {
    bv_bar_wait(&full[i % STAGES], (unsigned)(i / STAGES) & 1u);
    const int tile = blockIdx.x + (i / chunks) * gridDim.x, c = i % chunks, row = tile * ROWS + warp;
    if (row < n) {
      const unsigned char* at = sm + (size_t)(i % STAGES) * stage;
      const unsigned char* q = at + warp * pc[0];
      const unsigned char* h = at + ROWS * pc[0] + warp * pc[1];
      const unsigned char* s = at + ROWS * (pc[0] + pc[1]) + warp * pc[2];
      const unsigned char* d = at + ROWS * (pc[0] + pc[1] + pc[2]) + warp * pc[3];
#pragma unroll
      for (int j = 0; j < KC / 32 / 32; ++j) {
        const int u = lane + 32 * j;
        const typename F::Raw raw[1] = {bv_raw<T>(q, h, s, d, u)};
        lk_i8b_unit<F, 1, 1>(x, k, 0, c * (KC / 32) + u, raw, acc);
      }
      if (c == chunks - 1) {
        acc[0][0] = lk_warp_sum(acc[0][0]);
        lk_gemv_store<1, 1>(acc, nullptr, y, n, row);
        acc[0][0] = 0;
      }
    }
    __syncthreads();  // (the stage is read: it may be refilled)
    if (threadIdx.x == 0 && i + STAGES < tasks) issue(i + STAGES);
  }
}

// The fused gate/up GEMV (lk_gemv_glu's joint rounds, a row a warp, 8 rows a block) ending in the down projection's
// int8 copy of its output by a count a 32-group (the 4 blocks of a group; lk_last_arrival's one acquire-release count,
// session 50): the group's last block quantizes the group as the quantize launch would (lk_quantize_piece), in place
// of that launch after it. Session 21's form (a fence in every thread before the count) lost 4.6% on the 8B's decode.
__global__ void __launch_bounds__(256, 3)
    bv_glu_count(lk_blk<LK_Q4_K> g, lk_blk<LK_Q4_K> u, lk_xq x, float* __restrict__ y, int k, int n,
                 int* __restrict__ yq, int* __restrict__ count) {
  const int row0 = lk_gemv_row0<1>(), lane = threadIdx.x & 31;
  lk_acc ag[1][1], au[1][1];
  lk_gemv_sums_i8b2<LK_Q4_K, 1, 1, lk_xq, false>(g, u, x, k, n, min(row0, n - 1), ag, au);
  lk_xq_scale(x, k, ag, au);
  lk_glu_sums(ag, au);
  lk_gemv_store<1, 1>(ag, nullptr, y, n, row0);  // (lane 0's: the warp's reduced sum)
  lk_pdl_entry();  // (a warp without rows waits here, before the count)
  const int group = (int)blockIdx.x / 4;  // (8 rows a block, 32 a group)
  if (!lk_last_arrival(count + group, min(4, ((n + 7) / 8) - group * 4)) || threadIdx.x >= 32) return;
  const int c = group * 32 + 4 * lane;
  const bool ok = lane < 8 && c < n;
  const float4 v4 = ok ? __ldcg(reinterpret_cast<const float4*>(y + c)) : make_float4(0.f, 0.f, 0.f, 0.f);
  float q[4] = {v4.x, v4.y, v4.z, v4.w};
  lk_quantize_piece(q, yq, n, c, ok);
}

// bv_bulk_gemv's shared memory: STAGES chunks of 8 rows.
static size_t bulk_smem(int type, int kc, int stages) {
  size_t b = 0;
  for (int p = 0; p < 4; ++p) b += lk_plane_bytes(type, p, (unsigned long long)kc);
  return 8 * b * stages;
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
  lk_xq q() const { return lk_xq{xq, 1, 0}; }  // (as a GEMV's input: the copy of one row)
  float* y;   // outputs
  int kmax;
  int* yq;     // the outputs' int8 copies (the GLU's variants that write one: by a launch, by the count)
  int* yq2;
  int* count;  // bv_glu_count's counts, a 32-group
};

// GB_LINK_NS's launch: the wait on the launch before (which lets the GEMV after it start), then N ns of nothing.
__global__ void bv_link(unsigned ns) {
  lk_pdl_entry();
  spin_ns(ns);
}
static unsigned link_ns = 0;

// One decode-like pair: the activations quantized (lk_quantize_i8<false>, one row), then the GEMV of copy c.
using Gemv = std::function<void(int c, cudaStream_t)>;

static double time_graph(Ctx& cx, int k, int copies, const Gemv& g, bool with_gemv) {
  const int pairs = 64;
  return graph_us(cx.s, pairs, [&] {  // us a pair
    for (int i = 0; i < pairs; ++i) {
      launch(lk_quantize_i8<false>, (k / 4 + 63) / 64, 64, cx.s, (const float*)cx.x, cx.xq, k, 1);
      if (link_ns) launch(bv_link, 1, 32, cx.s, link_ns);
      if (with_gemv) g(i % copies, cx.s);
    }
  });
}

int main(int argc, char** argv) {
  // argv[1]: the variants to run, names holding one of its comma-separated words (the first run variant of a shape
  // is the others' reference for the bits); none: all.
  std::vector<std::string> words;
  for (std::string w, a = argc > 1 ? argv[1] : ""; !a.empty();) {
    const size_t at = a.find(',');
    w = a.substr(0, at);
    a = at == std::string::npos ? "" : a.substr(at + 1);
    if (!w.empty()) words.push_back(w);
  }
  auto keep = [&](const std::string& name) {
    return words.empty() || std::any_of(words.begin(), words.end(),
                                        [&](const std::string& w) { return name.find(w) != std::string::npos; });
  };
  Ctx cx{};
  cx.kmax = 14336;
  CK(cudaStreamCreate(&cx.s));
  CK(cudaMalloc(&cx.x, sizeof(float) * cx.kmax));
  CK(cudaMalloc(&cx.xq, cx.kmax * 2 + cx.kmax / 32 * 8));
  CK(cudaMalloc(&cx.y, sizeof(float) * 200000));
  CK(cudaMalloc(&cx.yq, cx.kmax * 2 + cx.kmax / 32 * 8));
  CK(cudaMalloc(&cx.yq2, cx.kmax * 2 + cx.kmax / 32 * 8));
  CK(cudaMalloc(&cx.count, sizeof(int) * (cx.kmax / 32)));
  CK(cudaMemset(cx.count, 0, sizeof(int) * (cx.kmax / 32)));
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
      {"q    4096x4096 q8_0", LK_Q8_0, 4096, 4096},   {"gate 14336x4096 q8_0", LK_Q8_0, 14336, 4096},
      {"down 4096x14336 q8_0", LK_Q8_0, 4096, 14336},
      // the 0.6B's rows of k 1,024 (one unit a lane: gemv_short's form), its logits the largest
      {"out06 151936x1024 q6_k", LK_Q6_K, 151936, 1024}, {"gate06 3072x1024 q4_k", LK_Q4_K, 3072, 1024},
  };
  printf("%-24s %-28s %9s %9s %7s %s\n", "shape", "variant", "us/gemv", "GB/s", "of_bw", "bits");
  const char* only_shape = std::getenv("GB_SHAPE");  // (a word of the shapes' names: those alone)
  if (const char* w = std::getenv("GB_LINK_NS")) link_ns = (unsigned)std::strtoul(w, nullptr, 10);
  if (link_ns) printf("(a %u ns link before each GEMV; the base counts it)\n", link_ns);
  for (const Shape& sh : shapes) {
    if (only_shape && !std::strstr(sh.name, only_shape)) continue;
    const size_t one = (sh.glu ? 2 : 1) * Mat{sh.type, sh.n, sh.k, {}}.bytes();
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
// A warp walking rows (bv_stream: RPW rows a group, AH units a lane a round) over at most WAVES waves of the grid.
#define BV_ADD_STREAM(T, RPW, AH, WAVES, NAME)                                                                     \
  add(NAME, [&](int c, cudaStream_t s) {                                                                           \
    auto kernel = bv_stream<lk_blk<T>, RPW, AH>;                                                                   \
    launch(kernel, std::min(grid(RPW, 8), WAVES * wave(kernel)), 256, s, view<T>(m, c), cx.q(), cx.y, k, n);       \
  });
#define BV_ADD_LIB(T)                                                                                                \
  auto lib##T = [&](auto kernel, int rpw) {                                                                          \
    return [&, kernel, rpw](int c, cudaStream_t s) {                                                                 \
      launch(kernel, grid(rpw, 8), 256, s, view<T>(m, c), cx.q(), (const float*)nullptr, cx.y, k, n);                \
    };                                                                                                               \
  };                                                                                                                 \
  add("lib rpw1", lib##T(lk_gemv<lk_blk<T>, 1, 1, lk_xq>, 1));                                                       \
  add("lib rpw2", lib##T(lk_gemv<lk_blk<T>, 2, 1, lk_xq>, 2));                                                       \
  add("lib smx rpw1", [&](int c, cudaStream_t s) {                                                                   \
    launch_ex(bv_smx<T, 1>, dim3(grid(1, 8)), dim3(256), (size_t)lk_gemv_glu_smem(true, 1, 1, 1, true, k), s,      \
              view<T>(m, c), cx.q(), cx.y, k, n);                                                                    \
  });                                                                                                                \
  add("lib smx rpw2", [&](int c, cudaStream_t s) {                                                                   \
    launch_ex(bv_smx<T, 2>, dim3(grid(2, 8)), dim3(256), (size_t)lk_gemv_glu_smem(true, 1, 1, 1, true, k), s,      \
              view<T>(m, c), cx.q(), cx.y, k, n);                                                                    \
  });                                                                                                                \
  add("lib split2 rpw1", [&](int c, cudaStream_t s) {                                                                \
    launch(lk_gemv_split<lk_blk<T>, 1, 1, 2, lk_xq>, (n + 3) / 4, 256, s, view<T>(m, c), cx.q(),                     \
           (const float*)nullptr, cx.y, k, n);                                                                       \
  });                                                                                                                \
  BV_ADD_STREAM(T, 1, 4, 1, "stream rpw1 ah4")                                                                       \
  BV_ADD_STREAM(T, 1, 2, 1, "stream rpw1 ah2")                                                                       \
  BV_ADD_STREAM(T, 2, 2, 1, "stream rpw2 ah2")                                                                       \
  BV_ADD_STREAM(T, 1, 4, 2, "stream rpw1 ah4 2waves")
// Rows of one unit a lane (k 1,024 of a block format): gemv_short's form (A 1, 4 or 8 rows a warp, as the lanes
// launch a small model's logits) against warps that walk the rows in one or two waves, the next group's loads
// issued before the current group's products (bv_stream with AH 1).
#define BV_ADD_SHORT(T)                                                                                              \
  add("lib short rpw4", lib##T(lk_gemv<lk_blk<T>, 4, 1, lk_xq, 1>, 4));                                              \
  add("lib short rpw8", lib##T(lk_gemv<lk_blk<T>, 8, 1, lk_xq, 1>, 8));                                              \
  BV_ADD_STREAM(T, 4, 1, 1, "stream rpw4 ah1")                                                                       \
  BV_ADD_STREAM(T, 8, 1, 1, "stream rpw8 ah1")                                                                       \
  BV_ADD_STREAM(T, 4, 1, 2, "stream rpw4 ah1 2waves")
#define BV_ADD_BULK(T, KC, ST, PF)                                                                                 \
  add(std::string("bulk kc" #KC " st" #ST) + (PF ? " pf" : ""), [&](int c, cudaStream_t s) {                          \
    auto kernel = bv_bulk_gemv<T, KC, ST, PF>;                                                                       \
    const size_t smem = bulk_smem(T, KC, ST);                                                                  \
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)); /* (occupancy) */  \
    int per = 0, sms = 0;                                                                                            \
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));                                             \
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, 256, smem));                                      \
    launch_ex(kernel, dim3(std::min((n + 7) / 8, sms * per)), dim3(256), smem, s, view<T>(m, c), cx.q(), cx.y,       \
              k, n);                                                                                                 \
  });
    if (sh.glu) {  // gate and up: copies c and c + 1
      auto glu = [&](auto kernel, int rpw, bool stage = false) {  // (stage: the launch's smem as the lowering gives it)
        const size_t smem = stage ? (size_t)lk_gemv_glu_smem(true, 1, rpw, 1, true, k) : 0;
        return [&, kernel, rpw, smem](int c, cudaStream_t s) {
          launch_ex(kernel, dim3(grid(rpw, 8)), dim3(256), smem, s, view<LK_Q4_K>(m, c),
                    view<LK_Q4_K>(m, (c + 1) % copies), cx.q(), cx.y, k, n);
        };
      };
      add("glu lib rpw1", glu(lk_gemv_glu<lk_blk<LK_Q4_K>, 1, 1, lk_xq>, 1));
      add("glu lib stage rpw1", glu(lk_gemv_glu<lk_blk<LK_Q4_K>, 1, 1, lk_xq, true>, 1, true));
      add("glu lib rpw2", glu(lk_gemv_glu<lk_blk<LK_Q4_K>, 2, 1, lk_xq>, 2));
      // The GLU then the down's int8 copy: the quantize launch after it (the lanes' form for k 4,096) against the
      // count a 32-group in the GLU's blocks (bv_glu_count). The copies are compared after the timing.
      add("glu lib rpw1 +quantize", [&](int c, cudaStream_t s) {
        launch(lk_gemv_glu<lk_blk<LK_Q4_K>, 1, 1, lk_xq>, grid(1, 8), 256, s, view<LK_Q4_K>(m, c),
               view<LK_Q4_K>(m, (c + 1) % copies), cx.q(), cx.y, k, n);
        launch(lk_quantize_i8<false>, (n / 4 + 63) / 64, 64, s, (const float*)cx.y, cx.yq, n, 1);
      });
      add("glu count rpw1", [&](int c, cudaStream_t s) {
        launch(bv_glu_count, grid(1, 8), 256, s, view<LK_Q4_K>(m, c), view<LK_Q4_K>(m, (c + 1) % copies), cx.q(),
               cx.y, k, n, cx.yq2, cx.count);
      });
#define BV_ADD_CP(G, MINB)                                                                                       \
  add(std::string(G ? "glu " : "") + "cp minb" #MINB, [&](int c, cudaStream_t s) {                                \
    auto kernel = bv_cp_q4k<G, MINB>;                                                                            \
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cp_smem<G>()));            \
    launch_ex(kernel, dim3(grid(1, 8)), dim3(256), cp_smem<G>(), s, view<LK_Q4_K>(m, c),                         \
              view<LK_Q4_K>(m, G ? (c + 1) % copies : c), cx.q(), cx.y, k, n);                                   \
  });
      BV_ADD_CP(true, 3)
      BV_ADD_CP(true, 4)
      BV_ADD_CP(true, 5)
    } else if (sh.type == LK_Q8_0) {
      auto q8 = [&](auto kernel, int rpw) {
        return [&, kernel, rpw](int c, cudaStream_t s) {
          launch(kernel, grid(rpw, 8), 256, s, view_q8(m, c), cx.q(), (const float*)nullptr, cx.y, k, n);
        };
      };
      add("lib rpw1", q8(lk_gemv<lk_q8, 1, 1, lk_xq>, 1));
      add("lib rpw2", q8(lk_gemv<lk_q8, 2, 1, lk_xq>, 2));
    } else if (sh.type == LK_Q4_K) {
      add("q4k-shfl ah4 rpw1 (s10 c1)", [&](int c, cudaStream_t s) {
        launch(bv_gemv_q4k<1, 4, 0>, grid(1, 8), 256, s, view<LK_Q4_K>(m, c), cx.q(), cx.y, k, n);
      });
      BV_ADD_LIB(LK_Q4_K)
      if (k <= 1024) BV_ADD_SHORT(LK_Q4_K)
      BV_ADD_CP(false, 4)
      BV_ADD_CP(false, 6)
      BV_ADD_CP(false, 8)
      BV_ADD_BULK(LK_Q4_K, 2048, 4, false)
      BV_ADD_BULK(LK_Q4_K, 2048, 8, false)
      BV_ADD_BULK(LK_Q4_K, 2048, 8, true)
      BV_ADD_BULK(LK_Q4_K, 1024, 12, true)
    } else {
      BV_ADD_LIB(LK_Q6_K)
      if (k <= 1024) BV_ADD_SHORT(LK_Q6_K)
      BV_ADD_BULK(LK_Q6_K, 2048, 4, false)
      BV_ADD_BULK(LK_Q6_K, 2048, 8, true)
    }
    std::vector<float> ref;
    for (auto& [name, g] : vs) {
      if (!keep(name)) continue;
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
    if (sh.glu) {  // the two ways of the GLU output's int8 copy (once each, copy 0): the same bytes
      const Gemv* by[2] = {nullptr, nullptr};
      for (auto& [name, g] : vs) {
        if (name == "glu lib rpw1 +quantize") by[0] = &g;
        if (name == "glu count rpw1") by[1] = &g;
      }
      if (by[0] && by[1] && keep("glu lib rpw1 +quantize") && keep("glu count rpw1")) {
        const size_t bytes = (size_t)n + n / 32 * 4;  // (int8 codes, then a float scale a 32-group)
        std::vector<char> a(bytes), b(bytes);
        CK(cudaMemset(cx.yq, 0, bytes));
        CK(cudaMemset(cx.yq2, 0xff, bytes));
        (*by[0])(0, cx.s);
        (*by[1])(0, cx.s);
        CK(cudaStreamSynchronize(cx.s));
        CK(cudaMemcpy(a.data(), cx.yq, bytes, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), cx.yq2, bytes, cudaMemcpyDeviceToHost));
        printf("%-24s %-28s the int8 copies %s\n", sh.name, "glu count rpw1",
               std::memcmp(a.data(), b.data(), bytes) == 0 ? "equal" : "DIFFER");
      }
    }
    printf("%-24s %-28s %9.2f  (the quantize kernel alone, a pair; %d copies of %.1f MB)\n", sh.name, "base", base,
           copies, one / 1e6);
    for (int p = 0; p < 4; ++p)
      for (void* d : m.planes[p]) cudaFree(d);
  }
  return 0;
}
