// The prelude every lane starts with: its number types, warp sums, and 16-byte loads of activations and weights.
//
// A lane defines `lk_act` (the element of its activations, caches and logits) and `lk_acc` (its sums) before this
// file: float and float under the dequant numerics, double and double under the precise ones.

#define LK_DEVICE __device__ __forceinline__

// The library's optional parts, each read by nvcc only where a program uses it (nvcc's time goes with the source it
// reads): the block formats (LK_WITH_BLOCKS), the tensor-core GEMMs (LK_WITH_MMA) and among them the tiled one
// (LK_WITH_GEMM_TILE), the f16 GEMM (LK_WITH_GEMM_HALF), the chunks' tensor-core attention (LK_WITH_ATTN_MMA). A
// lane's or a kernel module's head sets them (compiler/src/lane/emit.cpp, library_switches); a program that does not
// (the resident host) has them all.
#ifndef LK_WITH_BLOCKS
#define LK_WITH_BLOCKS 1
#endif
#ifndef LK_WITH_MMA
#define LK_WITH_MMA 1
#endif
#ifndef LK_WITH_GEMM_TILE
#define LK_WITH_GEMM_TILE 1
#endif
#ifndef LK_WITH_ATTN_MMA
#define LK_WITH_ATTN_MMA 1
#endif
#ifndef LK_WITH_GEMM_HALF
#define LK_WITH_GEMM_HALF 1
#endif

// LK_PDL_FIRST (the pdl_first knob; a lane's head defines it): which launches let the next one start before their wait
// instead of after it, bit 1 every kernel's entry but the decode GEMVs' (lk_pdl_entry), bit 2 theirs (lk_pdl_entry_gemv).
// Bit 4 (a measurement's, no knob sets it alone) takes the norms (lk_pdl_entry_norm) of bit 1's launches.
// LK_ABLATE, a measurement switch (0 in every lane; bench/ab_decode.sh's NVFLAGS_* set it): its bits make a kind of
// launch return at once (1 the attention launches, 2 the norms), so that a decode step without it says what that kind
// costs (bench/NOTES.md, session 28).
#ifndef LK_PDL_FIRST
#define LK_PDL_FIRST 0
#endif
// The dense FFN's gate activation in the fused gate/up launches (lk_glu, the GEMMs' GLU epilogues): 0 SiLU, 1 ggml's tanh
// GELU (gemma3: the lane's head defines it from the model).
#ifndef LK_GELU
#define LK_GELU 0
#endif
// The model's softcaps (gemma2; 0: none), from the lane's head: each attention logit (the scaled q . k) and each output
// logit x becomes cap tanh(x / cap) (lk_softcap).
#ifndef LK_ATTN_SOFTCAP
#define LK_ATTN_SOFTCAP 0
#endif
#ifndef LK_FINAL_SOFTCAP
#define LK_FINAL_SOFTCAP 0
#endif
#ifndef LK_ABLATE
#define LK_ABLATE 0
#endif
// LK_TIMELINE, a measurement switch (0 in every lane; with it the runtime records one decode step, the middle one, and
// writes LK_TIMELINE_FILE; bench/timeline.py reads it): each block's thread 0 stamps %globaltimer before and after its
// first PDL wait, with its SM, its launch's block count and its own index, into its SM's slots.
#ifndef LK_TIMELINE
#define LK_TIMELINE 0
#endif
#if LK_TIMELINE
#include <cstdio>  // (the runtime's side below: a kernel module's head has no host headers)
#include <vector>
struct lk_tl_rec {
  unsigned long long t0, t1;  // before and after the wait (ns); a mark's: its time twice
  unsigned blocks, block, sm, mark;  // mark: 0 for the wait's stamps, else LK_TL_MARK's k
};
#define LK_TL_SMS 256
#define LK_TL_PER_SM 4096
__device__ int lk_tl_on;
__device__ unsigned lk_tl_n[LK_TL_SMS];
__device__ lk_tl_rec lk_tl[LK_TL_SMS * LK_TL_PER_SM];
LK_DEVICE unsigned long long lk_tl_time() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// (whether to record, read before the wait: after it, its load was a dependent L2 round trip in every block's first
// warp, 20-35% of the step in session 28's call 7)
LK_DEVICE bool lk_tl_recording() {
  return threadIdx.x == 0 && threadIdx.y == 0 && *(volatile int*)&lk_tl_on;
}
// Room for n records in this SM's slots, taken before the wait (the atomic's round trip under it; taken after it, the
// block's first warp waited ~0.4 us a launch, 17% of the 0.6B's step in session 29's call 1): the first's index, or
// ~0u where the slots are full. A stamp is then a store.
LK_DEVICE unsigned lk_tl_slots(bool on, unsigned n) {
  if (!on) return ~0u;
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  sm %= LK_TL_SMS;
  const unsigned i = atomicAdd(&lk_tl_n[sm], n);
  return i + n <= LK_TL_PER_SM ? sm * LK_TL_PER_SM + i : ~0u;
}
LK_DEVICE void lk_tl_put(unsigned slot, unsigned long long t0, unsigned long long t1, unsigned mark) {
  if (slot == ~0u) return;
  lk_tl[slot] = {t0, t1, mark == ~0u ? 0u : gridDim.x * gridDim.y * gridDim.z,
                 blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z), slot / LK_TL_PER_SM, mark};
}
// A kernel's phase marks (LK_TL_MARKS at its start, before its wait, then LK_TL_MARK(k) for k in 1 .. LK_TL_MARKS_N):
// thread 0's time at each, stored into slots taken at the start (those never marked stay empty: blocks 0).
// bench/timeline.py prints each mark's offset from its launch's first release.
#define LK_TL_MARKS_N 8
LK_DEVICE unsigned lk_tl_marks(bool on) {
  const unsigned slot = lk_tl_slots(on, LK_TL_MARKS_N);
  for (unsigned k = 0; k < LK_TL_MARKS_N && slot != ~0u; ++k) lk_tl_put(slot + k, 0, 0, ~0u);
  return slot;
}
// The runtime's side (kernels/host_api.cuh declares them): recording on or off between steps, and the records written.
inline void lk_tl_check(cudaError_t e) {
  if (e != cudaSuccess) fprintf(stderr, "LK_TIMELINE: %s\n", cudaGetErrorString(e));
}
void lk_tl_arm(int on) {
  static unsigned zero[LK_TL_SMS] = {};
  lk_tl_check(cudaDeviceSynchronize());
  if (on) lk_tl_check(cudaMemcpyToSymbol(lk_tl_n, zero, sizeof zero));
  lk_tl_check(cudaMemcpyToSymbol(lk_tl_on, &on, sizeof on));
  lk_tl_check(cudaDeviceSynchronize());
}
void lk_tl_dump() {
  const char* path = getenv("LK_TIMELINE_FILE");
  if (!path) return;
  static unsigned n[LK_TL_SMS];
  lk_tl_check(cudaMemcpyFromSymbol(n, lk_tl_n, sizeof n));
  std::vector<lk_tl_rec> r((size_t)LK_TL_SMS * LK_TL_PER_SM);
  lk_tl_check(cudaMemcpyFromSymbol(r.data(), lk_tl, r.size() * sizeof(lk_tl_rec)));
  FILE* f = fopen(path, "w");
  if (!f) return;
  for (unsigned sm = 0; sm < LK_TL_SMS; ++sm)
    for (unsigned i = 0; i < n[sm] && i < LK_TL_PER_SM; ++i) {
      const lk_tl_rec& x = r[(size_t)sm * LK_TL_PER_SM + i];
      fprintf(f, "%llu %llu %u %u %u %u\n", x.t0, x.t1, x.blocks, x.block, x.sm, x.mark);
    }
  fclose(f);
}
#define LK_TL_BEFORE                                              \
  const unsigned lk_tl_slot = lk_tl_slots(lk_tl_recording(), 1u); \
  const unsigned long long lk_tl_t0 = lk_tl_time();
#define LK_TL_AFTER lk_tl_put(lk_tl_slot, lk_tl_t0, lk_tl_time(), 0u);
#define LK_TL_MARKS const unsigned lk_tl_marks_at = lk_tl_marks(lk_tl_recording());
#define LK_TL_MARK(k)                                                       \
  if (lk_tl_marks_at != ~0u) {                                              \
    const unsigned long long lk_tl_tm = lk_tl_time();                       \
    lk_tl_put(lk_tl_marks_at + (k) - 1, lk_tl_tm, lk_tl_tm, (unsigned)(k)); \
  }
#else
#define LK_TL_BEFORE
#define LK_TL_AFTER
#define LK_TL_MARKS
#define LK_TL_MARK(k)
#endif

// A weight matrix's load (the GEMVs' units, words and scales: constants streamed once a step): LK_WEIGHT_HINT 1 (every
// lane's) asks L2 to evict the weights first, so that a step's stream of weights does not push the kernels' code, the
// activations and the caches out of L2 (session 29: decode 0.6B +1.2%, 8B +0.9%, prefill(64) of the 8B +3.5%, the
// same values); 2 also keeps them out of L1 (+1.0%, +0.8%); 0 plain loads (an A/B's switch).
#ifndef LK_WEIGHT_HINT
#define LK_WEIGHT_HINT 1
#endif
#if LK_WEIGHT_HINT == 1
#define LK_WH ".L2::cache_hint"
#elif LK_WEIGHT_HINT == 2
#define LK_WH ".L1::no_allocate.L2::cache_hint"
#endif
// (an L2 policy of evict-first for every access: ld's own .L2::evict_first asks for 32-byte vectors)
LK_DEVICE unsigned long long lk_evict_first() {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
template <class T>
LK_DEVICE T lk_ldw(const T* p) {
#if LK_WEIGHT_HINT == 0 || !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 800
  return __ldg(p);
#else
  if constexpr (sizeof(T) == 1) {
    return __ldg(p);
  } else if constexpr (sizeof(T) == 16) {
    int4 v;
    asm("ld.global.nc" LK_WH ".v4.s32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(lk_evict_first()));
    return *reinterpret_cast<T*>(&v);
  } else if constexpr (sizeof(T) == 8) {
    uint2 v;
    asm("ld.global.nc" LK_WH ".v2.u32 {%0,%1}, [%2], %3;" : "=r"(v.x), "=r"(v.y) : "l"(p), "l"(lk_evict_first()));
    return *reinterpret_cast<T*>(&v);
  } else if constexpr (sizeof(T) == 4) {
    unsigned v;
    asm("ld.global.nc" LK_WH ".u32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(lk_evict_first()));
    return *reinterpret_cast<T*>(&v);
  } else {
    static_assert(sizeof(T) == 2, "a weight load of 1, 2, 4, 8 or 16 bytes");
    unsigned short v;
    asm("ld.global.nc" LK_WH ".u16 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(lk_evict_first()));
    return *reinterpret_cast<T*>(&v);
  }
#endif
}

// The two halves of a kernel's entry under programmatic dependent launch (no-ops without it): the wait until the
// launch before has finished and its writes are visible, and the trigger that lets the next launch start.
LK_DEVICE void lk_pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  LK_TL_BEFORE
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  LK_TL_AFTER
#endif
}
LK_DEVICE void lk_pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Every kernel's first statement. Under programmatic dependent launch (the `pdl` knob, sm_90) a kernel may start while
// the one before it drains: it waits here until that one has finished and its writes are visible, and lets the next
// launch start, after the wait (at most two launches in flight), or under pdl_first before it: the next launch's blocks
// then take the multiprocessors this one's predecessor leaves in its tail (each launch still waits for the one before
// it, so each finishes after all before it). Without PDL both are no-ops.
template <int BIT>
LK_DEVICE void lk_pdl_entry_of() {
  if constexpr ((LK_PDL_FIRST & BIT) != 0) lk_pdl_trigger();
  lk_pdl_wait();
  if constexpr ((LK_PDL_FIRST & BIT) == 0) lk_pdl_trigger();
}
LK_DEVICE void lk_pdl_entry() {
  lk_pdl_entry_of<1>();
}
// The decode GEMVs' (their sums' first round: kernels/gemv.cuh's EARLY).
LK_DEVICE void lk_pdl_entry_gemv() {
  lk_pdl_entry_of<2>();
}
// lk_pdl_entry for the norms, which LK_PDL_FIRST's bit 4 takes alone.
LK_DEVICE void lk_pdl_entry_norm() {
  lk_pdl_entry_of<1 | 4>();
}

// lk_pdl_entry that lets the next launch start only after the wait whatever LK_PDL_FIRST says: the step's last launch
// (the arg-max), so that no launch of a step starts before every launch of the step before it has finished (a step's
// attention stages cached positions before its wait).
LK_DEVICE void lk_pdl_entry_serial() {
  lk_pdl_entry_of<0>();
}

// Whether this block is the last of `arrivals` blocks to arrive at `*count` (every thread calls it, after writing what
// the last one reads; the last one reads them past L1, __ldcg): the block's writes made visible device-wide first, the
// last one's reads after everyone's. The last block resets the count for the next launch (all the others have counted
// by then). From sm_70 one acquire-release count by thread 0 after the block's barrier (the barrier orders every
// thread's writes before its release, and its acquire before every thread's reads after the second barrier: CUTLASS's
// generic barrier), in place of a sequentially consistent fence in every thread before the count and in the last
// block's after it.
LK_DEVICE bool lk_last_arrival(int* count, int arrivals) {
  __shared__ int last;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  __syncthreads();
  if (threadIdx.x == 0) {
    int old;
    asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(count) : "memory");
    last = old == arrivals - 1;
    if (last) *count = 0;
  }
  __syncthreads();
#else
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(count, 1) == arrivals - 1;
    if (last) *count = 0;
  }
  __syncthreads();
  if (last) __threadfence();
#endif
  return last;
}

// A warp's sum of `v`, every lane holding it after.
template <class T>
LK_DEVICE T lk_warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// A warp's maximum of `v`, every lane holding it after.
template <class T>
LK_DEVICE T lk_warp_max(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// A block's sum of `v` (every thread calls it; every thread gets the sum). `scratch` holds 32 values.
template <class T>
LK_DEVICE T lk_block_sum(T v, T* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
  v = lk_warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T s = lane < warps ? scratch[lane] : T(0);
  return lk_warp_sum(s);
}

// Eight consecutive activations as sums' operands, read with 16-byte loads.
LK_DEVICE void lk_load8(const float* p, lk_acc* out) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  out[0] = a.x; out[1] = a.y; out[2] = a.z; out[3] = a.w;
  out[4] = b.x; out[5] = b.y; out[6] = b.z; out[7] = b.w;
}
LK_DEVICE void lk_load8(const double* p, lk_acc* out) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const double2 v = reinterpret_cast<const double2*>(p)[i];
    out[2 * i] = v.x;
    out[2 * i + 1] = v.y;
  }
}

// A weight element of each plain matrix format as f32 (exact for f16 and bf16).
LK_DEVICE float lk_float(float v) { return v; }
LK_DEVICE float lk_float(__half v) { return __half2float(v); }
LK_DEVICE float lk_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// x capped to (-cap, cap) smoothly, as llama.cpp's graph computes it: cap tanh(x (1 / cap)); T float or double.
template <class T>
LK_DEVICE T lk_softcap(T x, float cap) {
  return (T)cap * tanh(x * ((T)1 / (T)cap));
}

// act(g) of the gated feed-forward (ACT: the fused launches' LK_GELU, or lk_swiglu's own): 0 SiLU g / (1 + e^-g), 1 the
// tanh GELU 0.5 g (1 + tanh(sqrt(2 / pi) (g + 0.044715 g^3))); T float or double.
template <int ACT = LK_GELU, class T>
LK_DEVICE T lk_gate(T g) {
  if constexpr (ACT == 1)
    return (T)0.5 * g * ((T)1 + tanh((T)0.79788456080286535588 * (g + (T)0.044715 * g * g * g)));
  else
    return g / ((T)1 + exp(-g));
}
