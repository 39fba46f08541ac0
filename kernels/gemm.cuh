// The int8 numerics' prefill GEMM on the tensor cores: R activation rows (a multiple of 16) times a Q8_0 matrix,
// y[r][j] = sum_i W[j][i] x[r][i] (+ bias[j]); with GLU, y = silu(G x) * (U x) over two matrices.
//
// A block stages LK_GEMM_COLS columns of x at a time in shared memory, quantized per 32-block by the rule of
// lk_i8_scale / lk_i8_q (under int8x2 the residual as a second word), and each warp takes 8 output rows: per
// 32-block, one mma.m16n8k32 (s8 times s8, s32 sums) per 16 activation rows and word, its integer sums scaled by the
// activation row's and the weight row's block scales into f32 sums. The weights stream from global memory straight
// into the B fragments (a lane reads 4 bytes at 4t and 16 + 4t of its row's 32-block: every 32-byte sector whole).

#define LK_GEMM_COLS 256

// D = A B for one m16n8k32 tile of int8: A four registers (rows g and g + 8, columns 4t.. and 16 + 4t..), B two.
LK_DEVICE void lk_mma_s8(int (&d)[4], const int (&a)[4], int b0, int b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0));
}

template <int R, bool GLU>
__global__ void __launch_bounds__(256) lk_gemm_i8(lk_q8 wg, lk_q8 wu, const float* __restrict__ x,
                                                  const float* __restrict__ bias, float* __restrict__ y, int k, int n) {
  lk_pdl_entry();
  static_assert(R % 16 == 0, "the GEMM takes activation rows in tiles of 16");
  constexpr int P = LK_INT8 == 2 ? 2 : 1;  // words an activation
  constexpr int M = GLU ? 2 : 1;           // matrices
  constexpr int ST = LK_GEMM_COLS + 16;    // a staged row's stride in bytes: rows g and g + 1 fall 4 banks apart
  __shared__ __align__(16) signed char xq[P][R][ST];
  __shared__ float xs[P][R][LK_GEMM_COLS / 32];
  const int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int row0 = (blockIdx.x * warps + warp) * 8;
  const int kb = k / 32;
  float acc[M][R / 16][4];
#pragma unroll
  for (int mat = 0; mat < M; ++mat)
#pragma unroll
    for (int tile = 0; tile < R / 16; ++tile)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mat][tile][e] = 0.f;
  // The weight rows this lane's fragments read (its B row g) and its outputs' rows (2t and 2t + 1), clamped.
  const size_t wrow = (size_t)min(row0 + g, n - 1);
  const size_t orow[2] = {(size_t)min(row0 + 2 * t, n - 1), (size_t)min(row0 + 2 * t + 1, n - 1)};
  for (int k0 = 0; k0 < k; k0 += LK_GEMM_COLS) {
    const int nb = min(LK_GEMM_COLS, k - k0) / 32;
    __syncthreads();  // the last tile's readers are done with the stage
    for (int job = warp; job < R * nb; job += warps) {
      const int r = job / nb, b = job % nb;
      float v = x[(size_t)r * k + k0 + b * 32 + lane];
#pragma unroll
      for (int p = 0; p < P; ++p) {
        const float d = lk_i8_scale(lk_warp_max(fabsf(v)));
        const int q = lk_i8_q(v, d);
        xq[p][r][b * 32 + lane] = (signed char)q;
        if (lane == 0) xs[p][r][b] = d;
        v -= d * (float)q;
      }
    }
    __syncthreads();
    if (row0 >= n) continue;
    for (int b = 0; b < nb; ++b) {
      const int blk = k0 / 32 + b;
      int bf[M][2];
      float ws[M][2];
#pragma unroll
      for (int mat = 0; mat < M; ++mat) {
        const lk_q8& w = mat ? wu : wg;
        const int* wp = reinterpret_cast<const int*>(w.q + wrow * k + (size_t)blk * 32);
        bf[mat][0] = __ldg(wp + t);
        bf[mat][1] = __ldg(wp + 4 + t);
        ws[mat][0] = __half2float(w.s[orow[0] * kb + blk]);
        ws[mat][1] = __half2float(w.s[orow[1] * kb + blk]);
      }
#pragma unroll
      for (int tile = 0; tile < R / 16; ++tile) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
          const signed char* s = &xq[p][tile * 16 + g][b * 32 + 4 * t];
          const int a[4] = {*reinterpret_cast<const int*>(s), *reinterpret_cast<const int*>(s + 8 * ST),
                            *reinterpret_cast<const int*>(s + 16), *reinterpret_cast<const int*>(s + 8 * ST + 16)};
          const float lo = xs[p][tile * 16 + g][b], hi = xs[p][tile * 16 + g + 8][b];
#pragma unroll
          for (int mat = 0; mat < M; ++mat) {
            int d[4];
            lk_mma_s8(d, a, bf[mat][0], bf[mat][1]);
            acc[mat][tile][0] += lo * ws[mat][0] * (float)d[0];
            acc[mat][tile][1] += lo * ws[mat][1] * (float)d[1];
            acc[mat][tile][2] += hi * ws[mat][0] * (float)d[2];
            acc[mat][tile][3] += hi * ws[mat][1] * (float)d[3];
          }
        }
      }
    }
  }
  if (row0 >= n) return;
#pragma unroll
  for (int tile = 0; tile < R / 16; ++tile)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = tile * 16 + g + (e >= 2 ? 8 : 0), j = row0 + 2 * t + (e & 1);
      if (j >= n) continue;
      float v = acc[0][tile][e] + (bias ? bias[j] : 0.f);
      if constexpr (GLU) v = v / (1.f + expf(-v)) * acc[M - 1][tile][e];
      y[(size_t)r * n + j] = v;
    }
}
