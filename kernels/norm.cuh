// The RMS norm with the residual add: x += add (when ADD), then out = x / sqrt(mean(x^2) + eps) * w, a block a row.
//
// Where the activations are f32 and a row fits (d a multiple of 4, at most V float4s a thread: kernels/shapes.cuh's
// lk_norm_pieces) the row stays in registers: every load of it issued at once, the weights (constant) read before the
// launch's PDL wait, the output and its quantized copy written from the registers. Otherwise (f64 activations, wide
// rows) the strided loops.

// The first of the 4 columns of piece j of the calling thread's (pieces a block's width of float4s apart).
LK_DEVICE int lk_norm_col(int j) {
  return 4 * ((int)threadIdx.x + j * (int)blockDim.x);
}

// Whether a row of d values takes the register form of V pieces a thread in the calling block.
template <int V>
LK_DEVICE bool lk_norm_in_regs(int d) {
  return std::is_same_v<lk_act, float> && d % 4 == 0 && d <= V * 4 * (int)blockDim.x;
}

// The calling thread's pieces of the norm's weights (zeros past d).
template <int V>
LK_DEVICE void lk_norm_load_w(const float* __restrict__ w, int d, float4 (&wv)[V]) {
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int c = lk_norm_col(j);
    wv[j] = c < d ? __ldg(reinterpret_cast<const float4*>(w + c)) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
}

// The 4 values of a piece as an array, and back.
LK_DEVICE void lk_unpack4(const float4& f, float (&v)[4]) {
  v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
}
LK_DEVICE float4 lk_pack4(const float (&v)[4]) {
  return make_float4(v[0], v[1], v[2], v[3]);
}

// One 4-value piece at column c of a row (k values) into its quantized copy, as lk_quantize_cols writes it: every lane
// of the warp calls it (the 32-block's maximum by shuffles over 8 lanes), `ok` false past the row with zeros in v.
LK_DEVICE void lk_quantize_piece(float (&v)[4], int* __restrict__ xq, int k, int c, bool ok) {
  constexpr int P = LK_INT8 == 2 ? 2 : 1;
  float* scales = reinterpret_cast<float*>(xq + (size_t)P * k / 4);
#pragma unroll
  for (int p = 0; p < P; ++p) {
    float s;
    const int packed = lk_i8_quad(v, s);  // (v becomes the residual: the second word's input)
    if (!ok) continue;
    xq[((size_t)p * k + c) / 4] = packed;
    if ((threadIdx.x & 7) == 0) scales[(size_t)p * (k / 32) + c / 32] = s;
  }
}

// Row `row` of the norm in registers (lk_norm_in_regs(d); every thread calls it), the weights' pieces already read;
// under QUANT also the row's quantized copy xq (k = d, the decode step's one row), under HALF its f16 copy (xq as
// gemm_half's rows of f16: lk_half_rows's values). `add` is read past L1 as below. (A template on the element, f32
// where it runs, so that a precise lane's kernels still compile.)
template <bool ADD, bool QUANT, int V, class A, bool HALF = false>
LK_DEVICE void lk_add_rmsnorm_regs(A* __restrict__ x, const A* __restrict__ add, const float4 (&wv)[V],
                                   A* __restrict__ out, int d, float eps, size_t row, int* __restrict__ xq) {
  __shared__ float scratch[32];
  A* xr = x + row * d;
  float v[V][4], a[V][4];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int c = lk_norm_col(j);
    const bool ok = c < d;
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    lk_unpack4(ok ? *reinterpret_cast<const float4*>(xr + c) : zero, v[j]);
    if constexpr (ADD) lk_unpack4(ok ? __ldcg(reinterpret_cast<const float4*>(add + row * d + c)) : zero, a[j]);
  }
  float ss = 0.f;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if constexpr (ADD) {
#pragma unroll
      for (int e = 0; e < 4; ++e) v[j][e] += a[j][e];
      if (lk_norm_col(j) < d) *reinterpret_cast<float4*>(xr + lk_norm_col(j)) = lk_pack4(v[j]);
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) ss += v[j][e] * v[j][e];
  }
  ss = lk_block_sum(ss, scratch);
  const float scale = 1.f / sqrt(ss / d + eps);
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int c = lk_norm_col(j);
    float w[4];
    lk_unpack4(wv[j], w);
#pragma unroll
    for (int e = 0; e < 4; ++e) v[j][e] = v[j][e] * scale * w[e];
    if (c < d) *reinterpret_cast<float4*>(out + row * d + c) = lk_pack4(v[j]);
    if constexpr (HALF)
      if (c < d) {
        const __half2 h[2] = {__floats2half2_rn(v[j][0], v[j][1]), __floats2half2_rn(v[j][2], v[j][3])};
        *reinterpret_cast<uint2*>(reinterpret_cast<__half*>(xq) + row * d + c) = *reinterpret_cast<const uint2*>(h);
      }
    if constexpr (QUANT)
      if (4 * j * (int)blockDim.x < d) lk_quantize_piece(v[j], xq, d, c, c < d);  // (uniform over the block)
  }
}

// Row `row` of the norm by the calling block in strided loops (every thread calls it; any row, any element type);
// with `h` its f16 copy too (gemm_half's rows).
template <bool ADD>
LK_DEVICE void lk_add_rmsnorm_strided(lk_act* __restrict__ x, const lk_act* __restrict__ add,
                                      const float* __restrict__ w, lk_act* __restrict__ out, int d, float eps,
                                      size_t row, __half* __restrict__ h = nullptr) {
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
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    const lk_act v = (lk_act)((lk_acc)x[base + i] * scale * (lk_acc)w[i]);
    out[base + i] = v;
    if (h) h[base + i] = __float2half_rn((float)v);
  }
}

// Row `row` of the norm by the calling block (every thread calls it): the register form where the row fits, else the
// strided loops. `add` is read past L1: under fuse_norm it was written by the other blocks of the launch this block
// ends.
template <bool ADD>
LK_DEVICE void lk_add_rmsnorm_row(lk_act* __restrict__ x, const lk_act* __restrict__ add, const float* __restrict__ w,
                                  lk_act* __restrict__ out, int d, float eps, size_t row) {
  if (lk_norm_in_regs<LK_NORM_V>(d)) {
    float4 wv[LK_NORM_V];
    lk_norm_load_w(w, d, wv);
    lk_add_rmsnorm_regs<ADD, false>(x, add, wv, out, d, eps, row, nullptr);
    return;
  }
  lk_add_rmsnorm_strided<ADD>(x, add, w, out, d, eps, row);
}

// Columns [c0, c0 + len) of a row of k values the calling block wrote (`row`) quantized as lk_quantize_i8<false>
// quantizes the row, the same codes and scales in its layout: the words' codes [P][k], then their 32-blocks' scales
// [P][k / 32] (c0 and len whole 32-blocks). A thread 4 values, 8 threads a 32-block; every lane of a warp takes part
// in each round, past len with zeros. The launch that writes a decode step's activations writes their copy too.
// (A template on the element so that a precise lane's kernels, which never call it, still compile: the int8 numerics'
// activations are f32.)
template <class A>
LK_DEVICE void lk_quantize_cols(const A* row, int* __restrict__ xq, int k, int c0, int len) {
  for (int base = 0; base < len; base += 4 * (int)blockDim.x) {
    const int c = c0 + base + 4 * (int)threadIdx.x;
    const bool ok = base + 4 * (int)threadIdx.x < len;
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = ok ? (float)row[c + e] : 0.f;
    lk_quantize_piece(v, xq, k, c, ok);
  }
}

// The norm's launch, a block a row; under QUANT (gemv_prequant, the decode step's one row) it also writes out's
// quantized copy xq, which the projections after it read: the quantize launch folded in; under HALF (gemm_half, a
// chunk's rows) out's f16 copy in xq, lk_half_rows's launch folded in the same way. V: the register form's pieces a
// thread (kernels/shapes.cuh's lk_norm_pieces for the launch's row and threads).
template <bool ADD, bool QUANT, int V = LK_NORM_V, bool HALF = false>
__global__ void __launch_bounds__(1024)
    lk_add_rmsnorm(lk_act* __restrict__ x, const lk_act* __restrict__ add, const float* __restrict__ w,
                   lk_act* __restrict__ out, int d, float eps, int* __restrict__ xq) {
  static_assert(!(QUANT && HALF), "one copy: int8 or f16");
  if (LK_ABLATE & 2) {  // (a measurement switch: kernels/prelude.cuh)
    lk_pdl_entry_norm();
    return;
  }
  if (lk_norm_in_regs<V>(d)) {
    float4 wv[V];
    lk_norm_load_w(w, d, wv);  // (constant: before the wait, under the launch before this one)
    lk_pdl_entry_norm();
    lk_add_rmsnorm_regs<ADD, QUANT, V, lk_act, HALF>(x, add, wv, out, d, eps, blockIdx.x, xq);
    return;
  }
  lk_pdl_entry_norm();
  lk_add_rmsnorm_strided<ADD>(x, add, w, out, d, eps, blockIdx.x, HALF ? reinterpret_cast<__half*>(xq) : nullptr);
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

// The blocks of a launch with a tail that are done (lk_last_arrival's count: its last block resets it). One such
// launch runs at a time (side streams leave them alone).
__device__ int lk_tail_done;

// Whether the calling block is the last of its launch to get here (every thread calls it); that block then sees every
// other block's writes (fuse_norm's and fuse_rope's tails).
LK_DEVICE bool lk_last_block() {
  return lk_last_arrival(&lk_tail_done, (int)gridDim.x);
}

// Ends a projection whose `rows` output rows `y` (of t.d) are the norm's `add`: the last block of the launch to finish
// adds them to the residual and norms each row, as lk_add_rmsnorm does.
LK_DEVICE void lk_norm_after(const lk_norm_tail& t, const lk_act* y, int rows) {
  if (!lk_last_block()) return;
  for (int r = 0; r < rows; ++r) {
    lk_add_rmsnorm_row<true>(t.x, y, t.w, t.out, t.d, t.eps, r);
    __syncthreads();
  }
}
