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

#if LK_WITH_MMA  // (prelude.cuh: the tensor-core GEMMs, where a program runs them)
#define LK_GEMM_KB (LK_GEMM_COLS / 32)  // 32-blocks a stage
#define LK_GEMM_BATCH 4                 // staging loads a warp has in flight at once

template <int R, bool GLU>
__global__ void __launch_bounds__(256) lk_gemm_i8(lk_q8 wg, lk_q8 wu, const float* __restrict__ x,
                                                  const float* __restrict__ bias, float* __restrict__ y, int k, int n) {
  lk_pdl_entry();
  static_assert(R % 16 == 0, "the GEMM takes activation rows in tiles of 16");
  constexpr int P = LK_INT8 == 2 ? 2 : 1;  // words an activation
  constexpr int M = GLU ? 2 : 1;           // matrices
  constexpr int ST = LK_GEMM_COLS + 16;    // a staged row's stride in bytes: rows g and g + 1 fall 4 banks apart
  __shared__ __align__(16) signed char xq[P][R][ST];
  __shared__ float xs[P][R][LK_GEMM_KB];
  const int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int row0 = (blockIdx.x * warps + warp) * 8;
  const bool mine = row0 < n;  // whether this warp has output rows (it stages either way)
  const int kb = k / 32;
  float acc[M][R / 16][4];
#pragma unroll
  for (int mat = 0; mat < M; ++mat)
#pragma unroll
    for (int tile = 0; tile < R / 16; ++tile)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mat][tile][e] = 0.f;
  // The weight row this lane's B fragments read (its row g) and its outputs' rows (2t and 2t + 1), clamped.
  const size_t wrow = (size_t)min(row0 + g, n - 1);
  const size_t orow[2] = {(size_t)min(row0 + 2 * t, n - 1), (size_t)min(row0 + 2 * t + 1, n - 1)};
  for (int k0 = 0; k0 < k; k0 += LK_GEMM_COLS) {
    const int nb = min(LK_GEMM_COLS, k - k0) / 32;
    // The stage's weights and their scales into registers first: their loads are in flight while the block stages x.
    int bf[LK_GEMM_KB][M][2];
    float ws[LK_GEMM_KB][M][2];
#pragma unroll
    for (int b = 0; b < LK_GEMM_KB; ++b)
#pragma unroll
      for (int mat = 0; mat < M; ++mat) {
        const bool ok = mine && b < nb;
        const lk_q8& w = mat ? wu : wg;
        const size_t blk = (size_t)(k0 / 32 + (ok ? b : 0));
        const int* wp = reinterpret_cast<const int*>(w.q + wrow * k + blk * 32);
        bf[b][mat][0] = ok ? __ldg(wp + t) : 0;
        bf[b][mat][1] = ok ? __ldg(wp + 4 + t) : 0;
        ws[b][mat][0] = ok ? __half2float(w.s[orow[0] * kb + blk]) : 0.f;
        ws[b][mat][1] = ok ? __half2float(w.s[orow[1] * kb + blk]) : 0.f;
      }
    __syncthreads();  // the last stage's readers are done
    // Stage x: a (row, 32-block) job takes 8 lanes of 4 values, a warp 4 jobs a step, LK_GEMM_BATCH steps' loads at
    // once.
    const int jobs = R * nb;
    for (int j0 = warp * 4; j0 < jobs; j0 += warps * 4 * LK_GEMM_BATCH) {
      float4 v4[LK_GEMM_BATCH];
#pragma unroll
      for (int i = 0; i < LK_GEMM_BATCH; ++i) {
        const int job = j0 + i * warps * 4 + (lane >> 3);
        v4[i] =
            job < jobs
                ? *reinterpret_cast<const float4*>(x + (size_t)(job / nb) * k + k0 + (job % nb) * 32 + (lane & 7) * 4)
                : make_float4(0.f, 0.f, 0.f, 0.f);
      }
#pragma unroll
      for (int i = 0; i < LK_GEMM_BATCH; ++i) {
        const int job = j0 + i * warps * 4 + (lane >> 3), r = job / nb, b = job % nb, c = b * 32 + (lane & 7) * 4;
        float v[4] = {v4[i].x, v4[i].y, v4[i].z, v4[i].w};
#pragma unroll
        for (int p = 0; p < P; ++p) {
          float d;
          const int packed = lk_i8_quad(v, d);
          if (job < jobs) {
            *reinterpret_cast<int*>(&xq[p][r][c]) = packed;
            if ((lane & 7) == 0) xs[p][r][b] = d;
          }
        }
      }
    }
    __syncthreads();
    if (!mine) continue;
#pragma unroll
    for (int b = 0; b < LK_GEMM_KB; ++b) {
      if (b >= nb) break;
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
            lk_mma_s8(d, a, bf[b][mat][0], bf[b][mat][1]);
            acc[mat][tile][0] += lo * ws[b][mat][0] * (float)d[0];
            acc[mat][tile][1] += lo * ws[b][mat][1] * (float)d[1];
            acc[mat][tile][2] += hi * ws[b][mat][0] * (float)d[2];
            acc[mat][tile][3] += hi * ws[b][mat][1] * (float)d[3];
          }
        }
      }
    }
  }
  if (!mine) return;
#pragma unroll
  for (int tile = 0; tile < R / 16; ++tile)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = tile * 16 + g + (e >= 2 ? 8 : 0), j = row0 + 2 * t + (e & 1);
      if (j >= n) continue;
      float v = acc[0][tile][e] + (bias ? bias[j] : 0.f);
      if constexpr (GLU) v = lk_gate(v) * acc[M - 1][tile][e];
      y[(size_t)r * n + j] = v;
    }
}
#endif  // LK_WITH_MMA

// gemm_prequant's two kernels: a chunk's activations quantized once, in the order the tensor cores take them, then
// GEMMs that read that copy, the weights as the mma's A operand (16 rows) and the activations as its B (8 rows).
//
// The copy's layout: the words' values [P][rows / 8][k / 32][32 lanes][8 bytes], lane 4g + t holding activation row g
// of its 8-row group, bytes 8t .. 8t + 7 of the 32-block (the B fragment, read with one 8-byte load); then the scales
// [P][rows / 8][k / 32][8] as f32. Within a 32-block the mma's k index 4t + e is byte 8t + e and 16 + 4t + e is byte
// 8t + 4 + e, on the weights' side too: the same bytes meet, and the integer sums are the 32-block's.

// lk_quantize_i8: `rows` rows of k activations, by the rule of lk_i8_scale / lk_i8_q (the values lk_gemm_i8 stages
// and lk_gemv_sums_i8 quantizes), into that layout (FRAG: rows a multiple of 8), or (gemv_prequant's decode GEMVs) row
// by row: the values [P][rows][k], then the scales [P][rows][k / 32]. A thread 4 values, 8 threads a 32-block, a
// block 256 columns of a row.
template <bool FRAG>
__global__ void __launch_bounds__(64)
    lk_quantize_i8(const float* __restrict__ x, int* __restrict__ xq, int k, int rows) {
  lk_pdl_entry();
  constexpr int P = LK_INT8 == 2 ? 2 : 1;
  const int r = blockIdx.y, c = (blockIdx.x * 64 + threadIdx.x) * 4;
  const bool ok = c < k;  // (k is whole 32-blocks: the 8 threads of a block are in or out together)
  const float4 v4 = ok ? *reinterpret_cast<const float4*>(x + (size_t)r * k + c) : make_float4(0.f, 0.f, 0.f, 0.f);
  float v[4] = {v4.x, v4.y, v4.z, v4.w};
  const int kb = k / 32, b = c / 32, cc = c % 32;
  float* scales = reinterpret_cast<float*>(xq + (size_t)P * rows * k / 4);
#pragma unroll
  for (int p = 0; p < P; ++p) {
    float d;
    const int packed = lk_i8_quad(v, d);
    if (!ok) continue;
    if constexpr (FRAG) {
      const size_t blk = ((size_t)p * (rows / 8) + r / 8) * kb + b;  // the (word, 8-row group, 32-block)
      xq[blk * 64 + (4 * (r % 8) + cc / 8) * 2 + (cc % 8) / 4] = packed;
      if ((threadIdx.x & 7) == 0) scales[blk * 8 + r % 8] = d;
    } else {
      xq[(((size_t)p * rows + r) * k + c) / 4] = packed;
      if ((threadIdx.x & 7) == 0) scales[((size_t)p * rows + r) * kb + b] = d;
    }
  }
}

#if LK_WITH_MMA
// The 32-blocks of loads a warp of lk_gemm_i8q has in flight before it multiplies the first.
#define LK_GEMM_AHEAD 4

// lk_gemm_i8q: the GEMM over activations lk_quantize_i8 wrote. A warp takes 16 output rows (the A fragment: rows g
// and g + 8, bytes 8t .. 8t + 7 of each 32-block, an 8-byte load a row) and TN groups of 8 activation rows from
// blockIdx.y * 8 * TN (a B fragment and its two scales each): per 32-block M * TN * P mmas, the weights' loads shared
// by the TN groups. No shared memory, no barrier; each output's sums in lk_gemm_i8's order and expression (activation
// scale times weight scale times the integer sum, 32-blocks in order, words inside): its results bit for bit.
template <bool GLU, int TN>
__global__ void __launch_bounds__(128)
    lk_gemm_i8q(lk_q8 wg, lk_q8 wu, const int* __restrict__ xq, const float* __restrict__ bias, float* __restrict__ y,
                int k, int n, int rows) {
  lk_pdl_entry();
  constexpr int P = LK_INT8 == 2 ? 2 : 1;  // words an activation
  constexpr int M = GLU ? 2 : 1;           // matrices
  constexpr int AH = TN * P > 4 ? LK_GEMM_AHEAD / 2 : LK_GEMM_AHEAD;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int row0 = (blockIdx.x * (blockDim.x >> 5) + warp) * 16, grp0 = blockIdx.y * TN;
  if (row0 >= n) return;
  const int kb = k / 32, groups = rows / 8;
  const uint2* xv = reinterpret_cast<const uint2*>(xq);
  const float2* xs = reinterpret_cast<const float2*>(xq + (size_t)P * rows * k / 4);
  const size_t wr[2] = {(size_t)min(row0 + g, n - 1), (size_t)min(row0 + g + 8, n - 1)};
  float acc[M][TN][4];
#pragma unroll
  for (int mat = 0; mat < M; ++mat)
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mat][j][e] = 0.f;
  for (int b0 = 0; b0 < kb; b0 += AH) {
    uint2 wq[AH][M][2], xb[AH][P][TN];
    float ws[AH][M][2];
    float2 sx[AH][P][TN];
#pragma unroll
    for (int a = 0; a < AH; ++a) {
      const int b = min(b0 + a, kb - 1);  // (past the end: loaded, never used)
#pragma unroll
      for (int mat = 0; mat < M; ++mat) {
        const lk_q8& w = mat ? wu : wg;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          wq[a][mat][h] = __ldg(reinterpret_cast<const uint2*>(w.q + wr[h] * k + (size_t)b * 32) + t);
          ws[a][mat][h] = __half2float(w.s[wr[h] * kb + b]);
        }
      }
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const size_t blk = ((size_t)p * groups + grp0 + j) * kb + b;
          xb[a][p][j] = __ldg(xv + blk * 32 + lane);
          sx[a][p][j] = __ldg(xs + blk * 4 + t);
        }
    }
#pragma unroll
    for (int a = 0; a < AH; ++a) {
      if (b0 + a >= kb) break;
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int mat = 0; mat < M; ++mat) {
          const int A[4] = {(int)wq[a][mat][0].x, (int)wq[a][mat][1].x, (int)wq[a][mat][0].y, (int)wq[a][mat][1].y};
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            int d[4];
            lk_mma_s8(d, A, (int)xb[a][p][j].x, (int)xb[a][p][j].y);
            const float lo = sx[a][p][j].x, hi = sx[a][p][j].y;  // activation rows 2t and 2t + 1
            acc[mat][j][0] += lo * ws[a][mat][0] * (float)d[0];
            acc[mat][j][1] += hi * ws[a][mat][0] * (float)d[1];
            acc[mat][j][2] += lo * ws[a][mat][1] * (float)d[2];
            acc[mat][j][3] += hi * ws[a][mat][1] * (float)d[3];
          }
        }
    }
  }
  // d[e]: output row row0 + g (+ 8 for e >= 2), activation row 8 (grp0 + j) + 2t (+ 1 for odd e).
#pragma unroll
  for (int j = 0; j < TN; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = 8 * (grp0 + j) + 2 * t + (e & 1), o = row0 + g + (e >= 2 ? 8 : 0);
      if (o >= n) continue;
      float v = acc[0][j][e] + (bias ? bias[o] : 0.f);
      if constexpr (GLU) v = lk_gate(v) * acc[M - 1][j][e];
      y[(size_t)r * n + o] = v;
    }
}

// An mma's integer sum as f32, exactly ((float)d) for |d| < 2^22 (a 32-block's sum is at most 32 x 128 x 127): the
// integer added into the mantissa of 1.5 x 2^23, which is then taken away: two ALU operations, no conversion unit.
LK_DEVICE float lk_sum_f32(int d) {
  return __int_as_float(d + 0x4B400000) - 12582912.f;
}

#if LK_WITH_GEMM_TILE
// gemm_tile's kernel, lk_gemm_i8t: the GEMM over activations lk_quantize_i8 wrote row by row (FRAG false), as block
// tiles staged in shared memory. A block of 4 warps takes 64 weight rows (64 output rows, or under GLU 32 gate rows and
// the same 32 up rows) and BN activation rows; stages of 4 32-blocks of both (and their scales) arrive by cp.async,
// LK_GT_STAGES of them in flight, and ldmatrix reads the mma's fragments from them: the weights as the A operand (16
// rows), the activations as B (8 rows). A warp takes 32 weight rows of each matrix and BN / 2 (GLU: BN / 4) activation
// rows: per 32-block and word, 2 x M x NT mmas. Each output's sums in lk_gemm_i8's order and expression (activation
// scale times weight scale times the integer sum, 32-blocks in order, words inside): its results bit for bit.
//
// Its shape and shared memory (a stage: the weight rows, the activation rows, then both's scales) are
// kernels/shapes.cuh's, which the compiler's lowering sizes the launch by.

// A stage's activations by cp.async (the tiled GEMMs': lk_gemm_i8t, lk_gemm_i8tb): 32-blocks b0 .. b0 + nb - 1 of
// rows act0 .. act0 + BN - 1 of each of the P words into `dst` (LK_GT_ROW bytes a row), their scales into `scales` (4
// a row); what lies past the rows or k is zeros.
template <int P, int BN>
LK_DEVICE void lk_gt_stage_acts(unsigned char* dst, float* scales, const signed char* xv, const float* xs, int act0,
                                int rows, int k, int b0, int nb) {
  const int kb = k / 32;
  for (int c = threadIdx.x; c < P * BN * 8; c += blockDim.x) {  // P x BN rows of 8 16-byte pieces
    const int pr = c >> 3, piece = c & 7, p = pr / BN, r = act0 + pr % BN;
    const bool ok = r < rows && piece < 2 * nb;
    const size_t row = (size_t)p * rows + min(r, rows - 1);
    lk_cp16(dst + pr * LK_GT_ROW + piece * 16, xv + row * k + (size_t)b0 * 32 + (ok ? piece * 16 : 0), ok);
  }
  for (int c = threadIdx.x; c < P * BN * 4; c += blockDim.x) {  // P x BN rows of 4 scales
    const int pr = c >> 2, b = c & 3, p = pr / BN, r = act0 + pr % BN;
    const bool ok = r < rows && b < nb;
    lk_cp4(scales + c, xs + ((size_t)p * rows + min(r, rows - 1)) * kb + b0 + (ok ? b : 0), ok);
  }
}

// The tiled GEMMs' outputs: acc[mat][mt][j][e] is weight row g (+ 8 for e >= 2) of the warp's 16-row tile mt, activation
// row 2t (+ 1 for odd e) of its 8-row tile j; with the bias, and under GLU silu(gate) times up.
template <bool GLU, int M, int NT>
LK_DEVICE void lk_gt_store(const float (&acc)[M][2][NT][4], const float* __restrict__ bias, float* __restrict__ y,
                           int out0, int act0, int wm, int wn, int n, int rows) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int o = out0 + wm * 32 + mt * 16 + g + (e >= 2 ? 8 : 0);
        const int r = act0 + wn * NT * 8 + j * 8 + 2 * t + (e & 1);
        if (o >= n || r >= rows) continue;
        float v = acc[0][mt][j][e] + (bias ? bias[o] : 0.f);
        if constexpr (GLU) v = lk_gate(v) * acc[M - 1][mt][j][e];
        y[(size_t)r * n + o] = v;
      }
}

// The B fragments of a warp's NT activation tiles of word p at 32-block b of a stage `sb` (ldmatrix, a pair of tiles
// at once).
template <int NT, int BN>
LK_DEVICE void lk_gt_b_fragments(int (&bf)[NT][2], const unsigned char* sb, int p, int wn, int b) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int q = 0; q < NT / 2; ++q) {
    int r[4];
    const int a0 = p * BN + wn * NT * 8 + q * 16;
    lk_ldmatrix4(r, sb + (a0 + (lane & 7) + 8 * (lane >> 4)) * LK_GT_ROW + b * 32 + 16 * ((lane >> 3) & 1));
    bf[2 * q][0] = r[0], bf[2 * q][1] = r[1], bf[2 * q + 1][0] = r[2], bf[2 * q + 1][1] = r[3];
  }
}

template <bool GLU, int BN>
__global__ void __launch_bounds__(LK_GT_WARPS * 32)
    lk_gemm_i8t(lk_q8 wg, lk_q8 wu, const int* __restrict__ xq, const float* __restrict__ bias, float* __restrict__ y,
                int k, int n, int rows) {
  lk_pdl_entry();
  constexpr int P = LK_INT8 == 2 ? 2 : 1;  // words an activation
  constexpr int M = GLU ? 2 : 1;           // matrices
  constexpr int BO = lk_gemm_i8t_outputs(GLU);  // output rows a block
  constexpr int WN = GLU ? 4 : 2;  // warps across the activation rows (GLU: 1 across the weight rows, else 2)
  constexpr int NT = BN / (8 * WN);  // 8-row activation tiles a warp
  static_assert(LK_GT_WARPS == 4 && LK_GT_WEIGHT_ROWS == 64 && LK_GT_BLOCKS == 4, "the warps' layout below");
  static_assert(NT >= 2 && NT % 2 == 0, "a warp takes its activation tiles in pairs (one ldmatrix a pair)");
  constexpr int A_BYTES = 64 * LK_GT_ROW, B_BYTES = P * BN * LK_GT_ROW, WS_BYTES = 64 * 16;
  constexpr int STAGE = lk_gemm_i8t_stage(P, BN);
  static_assert(STAGE == A_BYTES + B_BYTES + WS_BYTES + P * BN * 16, "the stage's parts, as shapes.cuh counts them");
  extern __shared__ unsigned char lk_smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int wm = GLU ? 0 : warp >> 1, wn = GLU ? warp : warp & 1;
  const int out0 = blockIdx.x * BO, act0 = blockIdx.y * BN;
  const int kb = k / 32, kstages = (kb + 3) / 4;
  const signed char* xv = reinterpret_cast<const signed char*>(xq);
  const float* xs = reinterpret_cast<const float*>(xq + (size_t)P * rows * k / 4);
  const size_t halves = (size_t)n * kb;  // a matrix's scales

  // Stage `kt` (32-blocks 4 kt ..) into slot `slot`; what lies past the matrices, the rows or k is zeros.
  auto load = [&](int slot, int kt) {
    unsigned char* s = lk_smem + slot * STAGE;
    const int b0 = kt * 4, nb = min(4, kb - b0);
    for (int c = tid; c < 64 * 8; c += 128) {  // weights: 64 rows of 8 16-byte pieces
      const int i = c >> 3, piece = c & 7, o = min(out0 + i % BO, n - 1);
      const lk_q8& w = i >= BO ? wu : wg;
      const bool ok = out0 + i % BO < n && piece < 2 * nb;
      lk_cp16(s + i * LK_GT_ROW + piece * 16, w.q + (size_t)o * k + (size_t)b0 * 32 + (ok ? piece * 16 : 0), ok);
    }
    unsigned char* ws = s + A_BYTES + B_BYTES;
    for (int c = tid; c < 64 * 3; c += 128) {  // weight scales: 3 words a row cover its 4 (from an even half)
      const int i = c / 3, word = c % 3, o = min(out0 + i % BO, n - 1);
      const lk_q8& w = i >= BO ? wu : wg;
      const size_t h0 = (size_t)o * kb + b0, h = (h0 & ~(size_t)1) + 2 * word;
      const bool ok = h < h0 + nb && h < halves;
      lk_cp4(ws + i * 16 + word * 4, w.s + (ok ? h : 0), ok);
    }
    lk_gt_stage_acts<P, BN>(s + A_BYTES, reinterpret_cast<float*>(ws + WS_BYTES), xv, xs, act0, rows, k, b0, nb);
  };

  float acc[M][2][NT][4] = {};

#pragma unroll
  for (int s = 0; s < LK_GT_STAGES - 1; ++s) {
    if (s < kstages) load(s, s);
    lk_cp_commit();
  }
  for (int kt = 0; kt < kstages; ++kt) {
    lk_cp_wait<LK_GT_STAGES - 2>();
    __syncthreads();  // stage kt has landed for every thread, and every warp is done with the slot refilled next
    if (kt + LK_GT_STAGES - 1 < kstages) load((kt + LK_GT_STAGES - 1) % LK_GT_STAGES, kt + LK_GT_STAGES - 1);
    lk_cp_commit();
    const unsigned char* s = lk_smem + (kt % LK_GT_STAGES) * STAGE;
    const unsigned char* sb = s + A_BYTES;
    const __half* ws = reinterpret_cast<const __half*>(s + A_BYTES + B_BYTES);
    const float* sx = reinterpret_cast<const float*>(s + A_BYTES + B_BYTES + WS_BYTES);
    const int nb = min(4, kb - kt * 4);
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      if (b >= nb) break;
      int af[M][2][4];
      float wsv[M][2][2];  // the weight scales of rows g and g + 8 of each 16-row tile
#pragma unroll
      for (int mat = 0; mat < M; ++mat)
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          const int i0 = mat * BO + wm * 32 + mt * 16;
          lk_ldmatrix4(af[mat][mt], s + (i0 + (lane & 7) + 8 * ((lane >> 3) & 1)) * LK_GT_ROW + b * 32 + 16 * (lane >> 4));
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int i = i0 + g + 8 * h, o = min(out0 + i % BO, n - 1);
            wsv[mat][mt][h] = __half2float(ws[i * 8 + (int)(((size_t)o * kb + kt * 4) & 1) + b]);
          }
        }
#pragma unroll
      for (int p = 0; p < P; ++p) {
        int bf[NT][2];
        lk_gt_b_fragments<NT, BN>(bf, sb, p, wn, b);
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const int a = p * BN + wn * NT * 8 + j * 8 + 2 * t;  // activation rows 2t and 2t + 1 of tile j
          const float lo = sx[a * 4 + b], hi = sx[(a + 1) * 4 + b];
#pragma unroll
          for (int mat = 0; mat < M; ++mat)
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
              int d[4];
              lk_mma_s8(d, af[mat][mt], bf[j][0], bf[j][1]);
              acc[mat][mt][j][0] += lo * wsv[mat][mt][0] * lk_sum_f32(d[0]);
              acc[mat][mt][j][1] += hi * wsv[mat][mt][0] * lk_sum_f32(d[1]);
              acc[mat][mt][j][2] += lo * wsv[mat][mt][1] * lk_sum_f32(d[2]);
              acc[mat][mt][j][3] += hi * wsv[mat][mt][1] * lk_sum_f32(d[3]);
            }
        }
      }
    }
  }
  lk_gt_store<GLU, M, NT>(acc, bias, y, out0, act0, wm, wn, n, rows);
}
#endif  // LK_WITH_GEMM_TILE
#endif  // LK_WITH_MMA
