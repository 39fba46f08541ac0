// The RMS norm with the residual add: x += add (when ADD), then out = x / sqrt(mean(x^2) + eps) * w, a block a row.

// Row `row` of the norm by the calling block (every thread calls it). `add` is read past L1: under fuse_norm it was
// written by the other blocks of the launch this block ends.
template <bool ADD>
LK_DEVICE void lk_add_rmsnorm_row(lk_act* __restrict__ x, const lk_act* __restrict__ add, const float* __restrict__ w,
                                  lk_act* __restrict__ out, int d, float eps, size_t row) {
  __shared__ lk_acc scratch[32];
  const size_t base = row * d;
  lk_acc ss = 0;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    lk_acc v = x[base + i];
    if (ADD) {
      const lk_act sum = (lk_act)(v + (lk_acc)__ldcg(add + base + i));
      x[base + i] = sum;
      v = sum;
    }
    ss += v * v;
  }
  ss = lk_block_sum(ss, scratch);
  const lk_acc scale = (lk_acc)1 / sqrt(ss / d + (lk_acc)eps);
  for (int i = threadIdx.x; i < d; i += blockDim.x) out[base + i] = (lk_act)((lk_acc)x[base + i] * scale * (lk_acc)w[i]);
}

// Columns [c0, c0 + len) of a row of k values the calling block wrote (`row`) quantized as lk_quantize_i8<false>
// quantizes the row, the same codes and scales in its layout: the words' codes [P][k], then their 32-blocks' scales
// [P][k / 32] (c0 and len whole 32-blocks). A thread 4 values, 8 threads a 32-block; every lane of a warp takes part
// in each round, past len with zeros. The launch that writes a decode step's activations writes their copy too.
// (A template on the element so that a precise lane's kernels, which never call it, still compile: the int8 numerics'
// activations are f32.)
template <class A>
LK_DEVICE void lk_quantize_cols(const A* row, int* __restrict__ xq, int k, int c0, int len) {
  constexpr int P = LK_INT8 == 2 ? 2 : 1;
  float* scales = reinterpret_cast<float*>(xq + (size_t)P * k / 4);
  for (int base = 0; base < len; base += 4 * (int)blockDim.x) {
    const int c = c0 + base + 4 * (int)threadIdx.x;
    const bool ok = base + 4 * (int)threadIdx.x < len;
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = ok ? (float)row[c + e] : 0.f;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      float s;
      const int packed = lk_i8_quad(v, s);
      if (!ok) continue;
      xq[((size_t)p * k + c) / 4] = packed;
      if ((threadIdx.x & 7) == 0) scales[(size_t)p * (k / 32) + c / 32] = s;
    }
  }
}

// The norm's launch, a block a row; under QUANT (gemv_prequant, the decode step's one row) it also writes out's
// quantized copy xq, which the projections after it read: the quantize launch folded in.
template <bool ADD, bool QUANT>
__global__ void __launch_bounds__(1024) lk_add_rmsnorm(lk_act* __restrict__ x, const lk_act* __restrict__ add,
                                                       const float* __restrict__ w, lk_act* __restrict__ out, int d,
                                                       float eps, int* __restrict__ xq) {
  lk_pdl_entry();
  lk_add_rmsnorm_row<ADD>(x, add, w, out, d, eps, blockIdx.x);
  if constexpr (QUANT) {
    __syncthreads();  // (the row's values, written by the block's threads)
    lk_quantize_cols(out, xq, d, 0, d);
  }
}

// The norm folded into the projection before it (fuse_norm): the residual, the norm's weights and output.
struct lk_norm_tail {
  lk_act* x;
  const float* w;
  lk_act* out;
  int d;
  float eps;
};

// The blocks of a launch with a tail that are done; the tail's block resets it. One such launch runs at a time (side
// streams leave them alone).
__device__ unsigned lk_tail_done;

// Whether the calling block is the last of its launch to get here (every thread calls it); that block then sees every
// other block's writes, and ends with lk_tail_reset.
LK_DEVICE bool lk_last_block() {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&lk_tail_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last) __threadfence();
  return last;
}
LK_DEVICE void lk_tail_reset() {
  if (threadIdx.x == 0) lk_tail_done = 0;
}

// Ends a projection whose `rows` output rows `y` (of t.d) are the norm's `add`: the last block of the launch to finish
// adds them to the residual and norms each row, as lk_add_rmsnorm does.
LK_DEVICE void lk_norm_after(const lk_norm_tail& t, const lk_act* y, int rows) {
  if (!lk_last_block()) return;
  for (int r = 0; r < rows; ++r) {
    lk_add_rmsnorm_row<true>(t.x, y, t.w, t.out, t.d, t.eps, r);
    __syncthreads();
  }
  lk_tail_reset();
}
