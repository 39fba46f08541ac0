// The int8 numerics' prefill GEMM over a block-format matrix (Q4_0 .. Q6_K, MXFP4, IQ4: formats.cuh's lk_blk) on the
// tensor cores, read in place as llama.cpp's mmq reads its blocks: each 32-group's codes go to the mma as int8 (A,
// 16 weight rows) against the chunk's activations quantized by lk_quantize_i8 (B, 8 rows), and the format's scale and
// minimum apply to the integer sums per 32-group.
//
// A lane's A fragment of a 32-group holds its elements 8t .. 8t + 7 (the k order lk_quantize_i8 lays the activations
// in: the mma's k index 4t + e is element 8t + e, 16 + 4t + e is 8t + 4 + e): one 8-byte load of the unit's codes
// (bytes 8 (t % 2) .., low nibbles for t < 2, high for t >= 2), with the high bits from the same elements' bits.
// Q4_0, Q5_0, Q3_K, Q6_K, MXFP4 and IQ4 make their codes signed (the offset taken away, or their tables); Q4_1, Q5_1,
// Q2_K, Q4_K and Q5_K keep them unsigned and add min x (the activations' sum), the sum from one more mma with all-ones
// weights. Q2_K, Q3_K and Q6_K scale the two 16-element halves of a group apart: a lane's 8 elements lie in half t / 2,
// and one mma a half takes the other half's lanes as zeros (the all-ones weights too).

#if LK_WITH_MMA && LK_WITH_BLOCKS

// A weight row's 32-group as one lane's share of the mma's A operand: `codes` (elements 8t .. 8t + 3, 8t + 4 .. 8t + 7)
// and the group's scales and minimums (HALVES formats: each 16-element half's; the others' in [0]).
struct lk_mma_group {
  int codes[2];
  float scale[2];
  float min[2];
};

// Format T's 32-group `b` of a row as the integer GEMMs take it: what multiplies its codes' integer sums (HALVES: each
// half's, Q2_K, Q3_K and Q6_K scaling 16 elements apart) and what multiplies the activations' sums (`min`, 0 where the
// codes are made signed instead), from the scale bytes `s` (the group's in .x, or a 256-block's 16), the 256-block's
// d (Q3_K, Q6_K) or d and dmin (Q2_K, `dd`); and its codes as signed bytes.
template <int T>
struct lk_block_int8 {
  static constexpr bool MIN = T == LK_Q4_1 || T == LK_Q5_1 || T == LK_Q4_K || T == LK_Q5_K || T == LK_Q2_K;
  static constexpr bool HALVES = T == LK_Q6_K || T == LK_Q2_K || T == LK_Q3_K;
  static LK_DEVICE void scales(const int4& s, __half d6, unsigned dd, int b, float (&scale)[2], float (&min)[2]) {
    min[0] = min[1] = 0.f;
    scale[1] = 0.f;
    if constexpr (T == LK_Q4_0 || T == LK_Q5_0 || T == LK_IQ4_NL) {
      scale[0] = __half2float(__ushort_as_half((unsigned short)s.x));
    } else if constexpr (T == LK_IQ4_XS) {
      const float d = __half2float(__ushort_as_half((unsigned short)((unsigned)s.x & 0xffff)));
      scale[0] = d * (float)(lk_iq4_xs_scale(b % 8, (unsigned)s.x, (unsigned)s.y) - 32);
    } else if constexpr (T == LK_Q4_1 || T == LK_Q5_1) {
      scale[0] = __half2float(__ushort_as_half((unsigned short)(s.x & 0xffff)));
      min[0] = __half2float(__ushort_as_half((unsigned short)((unsigned)s.x >> 16)));
    } else if constexpr (T == LK_MXFP4) {
      const unsigned e = (unsigned)s.x & 0xff;
      scale[0] = __uint_as_float(e < 2 ? (0x00200000u << e) : ((e - 1) << 23));
    } else if constexpr (T == LK_Q4_K || T == LK_Q5_K) {
      const float d = __half2float(__ushort_as_half((unsigned short)((unsigned)s.x & 0xffff)));
      const float dmin = __half2float(__ushort_as_half((unsigned short)((unsigned)s.x >> 16)));
      int sc, mn;
      lk_scale_min_k4(b % 8, (unsigned)s.y, (unsigned)s.z, (unsigned)s.w, sc, mn);
      scale[0] = d * (float)sc;
      min[0] = -dmin * (float)mn;
    } else if constexpr (T == LK_Q2_K) {  // a (scale, min) byte a half
      const float d = __half2float(__ushort_as_half((unsigned short)(dd & 0xffff)));
      const float dmin = __half2float(__ushort_as_half((unsigned short)(dd >> 16)));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int sm = lk_byte16(s, 2 * (b % 8) + h);
        scale[h] = d * (float)(sm & 0xf);
        min[h] = -dmin * (float)(sm >> 4);
      }
    } else if constexpr (T == LK_Q3_K) {  // a 6-bit scale a half
      const float d = __half2float(d6);
      scale[0] = d * (float)(lk_q3k_scale(s, 2 * (b % 8)) - 32);
      scale[1] = d * (float)(lk_q3k_scale(s, 2 * (b % 8) + 1) - 32);
    } else {  // Q6_K: an int8 scale a half
      const float d = __half2float(d6);
      scale[0] = d * (float)(signed char)(s.x & 0xff);
      scale[1] = d * (float)(signed char)((s.x >> 8) & 0xff);
    }
  }
  // Four codes (a byte each, the high bits in) as the mma takes them: Q4_0, Q5_0, Q3_K and Q6_K less their offset, MXFP4
  // as its E2M1 values (doubled), IQ4 as its table's values, the others as they are.
  static LK_DEVICE int codes(int c) {
    if constexpr (T == LK_Q4_0) return (int)__vsub4((unsigned)c, 0x08080808u);
    if constexpr (T == LK_Q5_0) return (int)__vsub4((unsigned)c, 0x10101010u);
    if constexpr (T == LK_Q6_K) return (int)__vsub4((unsigned)c, 0x20202020u);
    if constexpr (T == LK_Q3_K) return (int)__vsub4((unsigned)c, 0x04040404u);
    if constexpr (T == LK_MXFP4) return lk_mxfp4_bytes(c);
    if constexpr (T == LK_IQ4_NL || T == LK_IQ4_XS) return lk_iq4_bytes(c);
    return c;
  }
};

template <int T>
struct lk_mma_frag {
  using I = lk_block_int8<T>;
  // What a lane loads of group `b` of row `row` (kb groups a row), as stored.
  struct Raw {
    uint2 q;       // bytes 8 (t % 2) .. 8 (t % 2) + 7 of the codes
    unsigned h;    // the high bits' word that holds the lane's elements
    int4 s;        // the scale bytes, the 256-block's d and (Q2_K) d and dmin: lk_blk_scales
    __half d;
    unsigned dd;
  };
  static LK_DEVICE Raw load(const lk_blk<T>& m, size_t row, int kb, int b, int t) {
    Raw r;
    const size_t g = row * (size_t)kb + (size_t)b;
    r.q = __ldg(reinterpret_cast<const uint2*>(m.q) + 2 * g + (t & 1));
    if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) r.h = __ldg(reinterpret_cast<const unsigned*>(m.h) + g);
    if constexpr (T == LK_Q6_K) r.h = __ldg(reinterpret_cast<const unsigned*>(m.h) + 2 * g + (t >> 1));
    lk_blk_scales(m, g, row * (size_t)(kb / 8) + (size_t)(b / 8), b % 8, r.s, r.d, r.dd);
    return r;
  }
  // The lane's codes and the group's scales, for lane t of group b.
  static LK_DEVICE lk_mma_group decode(const Raw& r, int b, int t) {
    lk_mma_group o;
    const int shift = 4 * (t >> 1);
    int c[2] = {(int)((r.q.x >> shift) & 0x0f0f0f0fu), (int)((r.q.y >> shift) & 0x0f0f0f0fu)};
    if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) {
      c[0] |= lk_q5_high(r.h, t >> 1, 2 * (t & 1));  // (elements 8 (t & 1) .. of the half t >> 1)
      c[1] |= lk_q5_high(r.h, t >> 1, 2 * (t & 1) + 1);
    }
    if constexpr (T == LK_Q6_K) {
      c[0] |= lk_q6k_high(r.h, 2 * (t & 1));  // (elements 8 (t & 1) .. of the half t >> 1)
      c[1] |= lk_q6k_high(r.h, 2 * (t & 1) + 1);
    }
    o.codes[0] = I::codes(c[0]);
    o.codes[1] = I::codes(c[1]);
    I::scales(r.s, r.d, r.dd, b, o.scale, o.min);
    return o;
  }
};

// The activations' B fragment of 8-row group `grp`, word p, 32-group b, from lk_quantize_i8's fragment layout, and
// the scales of the group's rows 2t and 2t + 1.
LK_DEVICE void lk_b_fragment(const int* xq, int p, int grp, int b, int k, int rows, int lane, uint2& v, float2& s) {
  constexpr int P = LK_INT8 == 2 ? 2 : 1;
  const float* scales = reinterpret_cast<const float*>(xq + (size_t)P * rows * k / 4);
  const size_t blk = ((size_t)p * (rows / 8) + grp) * (k / 32) + b;
  v = __ldg(reinterpret_cast<const uint2*>(xq) + blk * 32 + lane);
  s = __ldg(reinterpret_cast<const float2*>(scales) + blk * 4 + (lane & 3));
}

// lk_gemm_i8qb: lk_gemm_i8q's shape over a block-format matrix. A warp takes 16 output rows and TN groups of 8
// activation rows from blockIdx.y * 8 * TN; per 32-group M * TN * P mmas (Q6_K twice that), and with a minimum one
// more a group and word for the activations' sums. No shared memory, no barrier.
template <int T, bool GLU, int TN>
__global__ void __launch_bounds__(128)
    lk_gemm_i8qb(lk_blk<T> wg, lk_blk<T> wu, const int* __restrict__ xq, const float* __restrict__ bias,
                 float* __restrict__ y, int k, int n, int rows) {
  lk_pdl_entry();
  using F = lk_mma_frag<T>;
  using I = lk_block_int8<T>;
  constexpr int P = LK_INT8 == 2 ? 2 : 1;  // words an activation
  constexpr int M = GLU ? 2 : 1;           // matrices
  constexpr int AH = 2;                    // 32-groups of loads in flight before the first is multiplied
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  // (the activation groups along x: the blocks that run together read the same weights, from L2 after the first)
  const int row0 = (blockIdx.y * (blockDim.x >> 5) + warp) * 16, grp0 = blockIdx.x * TN;
  if (row0 >= n) return;
  const int kb = k / 32;
  const size_t wr[2] = {(size_t)min(row0 + g, n - 1), (size_t)min(row0 + g + 8, n - 1)};
  float acc[M][TN][4];
#pragma unroll
  for (int mat = 0; mat < M; ++mat)
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mat][j][e] = 0.f;
  for (int b0 = 0; b0 < kb; b0 += AH) {
    typename F::Raw raw[AH][M][2];
    uint2 xb[AH][P][TN];
    float2 sx[AH][P][TN];
#pragma unroll
    for (int a = 0; a < AH; ++a) {
      const int b = min(b0 + a, kb - 1);  // (past the end: loaded, never used)
#pragma unroll
      for (int mat = 0; mat < M; ++mat)
#pragma unroll
        for (int h = 0; h < 2; ++h) raw[a][mat][h] = F::load(mat ? wu : wg, wr[h], kb, b, t);
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int j = 0; j < TN; ++j) lk_b_fragment(xq, p, grp0 + j, b, k, rows, lane, xb[a][p][j], sx[a][p][j]);
    }
#pragma unroll
    for (int a = 0; a < AH; ++a) {
      const int b = b0 + a;
      if (b >= kb) break;
      lk_mma_group w[M][2];
#pragma unroll
      for (int mat = 0; mat < M; ++mat)
#pragma unroll
        for (int h = 0; h < 2; ++h) w[mat][h] = F::decode(raw[a][mat][h], b, t);
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int b0f = (int)xb[a][p][j].x, b1f = (int)xb[a][p][j].y;
          const float xs[2] = {sx[a][p][j].x, sx[a][p][j].y};  // activation rows 2t and 2t + 1
          float xsum[2][2] = {};  // their sums over the group ([0]) or each half ([h]: HALVES), scaled
          if constexpr (I::MIN) {
#pragma unroll
            for (int h = 0; h < (I::HALVES ? 2 : 1); ++h) {
              const int one = !I::HALVES || (t >> 1) == h ? 0x01010101 : 0;  // (a lane's elements: half t / 2)
              const int ones[4] = {one, one, one, one};
              int sum[4];
              lk_mma_s8(sum, ones, b0f, b1f);
              xsum[h][0] = xs[0] * lk_sum_f32(sum[0]);
              xsum[h][1] = xs[1] * lk_sum_f32(sum[1]);
            }
          }
#pragma unroll
          for (int mat = 0; mat < M; ++mat) {
            if constexpr (I::HALVES) {
              const bool first = t < 2;  // the lane's elements are in the group's first half
              const int A0[4] = {first ? w[mat][0].codes[0] : 0, first ? w[mat][1].codes[0] : 0,
                                 first ? w[mat][0].codes[1] : 0, first ? w[mat][1].codes[1] : 0};
              const int A1[4] = {first ? 0 : w[mat][0].codes[0], first ? 0 : w[mat][1].codes[0],
                                 first ? 0 : w[mat][0].codes[1], first ? 0 : w[mat][1].codes[1]};
              int d0[4], d1[4];
              lk_mma_s8(d0, A0, b0f, b1f);
              lk_mma_s8(d1, A1, b0f, b1f);
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const lk_mma_group& wr_ = w[mat][e >> 1];
                acc[mat][j][e] += xs[e & 1] * wr_.scale[0] * lk_sum_f32(d0[e]);
                acc[mat][j][e] += xs[e & 1] * wr_.scale[1] * lk_sum_f32(d1[e]);
                if constexpr (I::MIN) acc[mat][j][e] += wr_.min[0] * xsum[0][e & 1] + wr_.min[1] * xsum[1][e & 1];
              }
            } else {
              const int A[4] = {w[mat][0].codes[0], w[mat][1].codes[0], w[mat][0].codes[1], w[mat][1].codes[1]};
              int d[4];
              lk_mma_s8(d, A, b0f, b1f);
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const lk_mma_group& wr_ = w[mat][e >> 1];
                acc[mat][j][e] += xs[e & 1] * wr_.scale[0] * lk_sum_f32(d[e]);
                if constexpr (I::MIN) acc[mat][j][e] += wr_.min[0] * xsum[0][e & 1];
              }
            }
          }
        }
    }
  }
  // acc[.][j][e]: output row row0 + g (+ 8 for e >= 2), activation row 8 (grp0 + j) + 2t (+ 1 for odd e).
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

#if LK_WITH_GEMM_TILE
// gemm_tile over a block format, lk_gemm_i8tb: lk_gemm_i8t's tiles (a block of 4 warps, 64 weight rows by BN
// activation rows, the activations' stages by cp.async, the fragments by ldmatrix) with the weights unpacked on the way:
// each thread loads two of a stage's 256 32-groups into registers one stage ahead, and unpacks them into int8 rows (the
// codes as lk_block_int8 makes them) and their scales and minimum in shared memory, the tile that the warps read next.
template <int T, bool GLU, int BN>
__global__ void __launch_bounds__(LK_GT_WARPS * 32)
    lk_gemm_i8tb(lk_blk<T> wg, lk_blk<T> wu, const int* __restrict__ xq, const float* __restrict__ bias,
                 float* __restrict__ y, int k, int n, int rows) {
  lk_pdl_entry();
  using F = lk_fmt<lk_blk<T>>;
  using I = lk_block_int8<T>;
  constexpr int P = LK_INT8 == 2 ? 2 : 1;        // words an activation
  constexpr int M = GLU ? 2 : 1;                 // matrices
  constexpr int BO = lk_gemm_i8t_outputs(GLU);   // output rows a block
  constexpr int WN = GLU ? 4 : 2;                // warps across the activation rows
  constexpr int NT = BN / (8 * WN);              // 8-row activation tiles a warp
  static_assert(LK_GT_WARPS == 4 && LK_GT_WEIGHT_ROWS == 64 && LK_GT_BLOCKS == 4, "the warps' layout below");
  static_assert(NT >= 2 && NT % 2 == 0, "a warp takes its activation tiles in pairs (one ldmatrix a pair)");
  constexpr int WT = lk_gemm_i8tb_weights(), AT = lk_gemm_i8tb_acts(P, BN), A_ROWS = P * BN * LK_GT_ROW;
  extern __shared__ unsigned char lk_smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int wm = GLU ? 0 : warp >> 1, wn = GLU ? warp : warp & 1;
  const int out0 = blockIdx.x * BO, act0 = blockIdx.y * BN;
  const int kb = k / 32, kstages = (kb + 3) / 4;
  const signed char* xv = reinterpret_cast<const signed char*>(xq);
  const float* xs = reinterpret_cast<const float*>(xq + (size_t)P * rows * k / 4);
  unsigned char* const acts = lk_smem + 2 * WT;

  // The activations of stage kt (32-blocks 4 kt ..) into slot `slot`, as lk_gemm_i8t stages them.
  auto load_acts = [&](int slot, int kt) {
    unsigned char* s = acts + slot * AT;
    lk_gt_stage_acts<P, BN>(s, reinterpret_cast<float*>(s + A_ROWS), xv, xs, act0, rows, k, kt * 4, min(4, kb - kt * 4));
  };
  // The thread's two weight groups of stage kt: group c = tid + 128 i is row c / 4's group c % 4 of the stage.
  typename F::Raw raw[2];
  auto fetch = [&](int kt) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int c = tid + 128 * i, row = c >> 2, b = min(kt * 4 + (c & 3), kb - 1);
      const lk_blk<T> w = lk_pick(GLU && row >= BO, wg, wu);
      raw[i] = F::load(w, (size_t)min(out0 + row % BO, n - 1), k, b);
    }
  };
  // ... unpacked into tile `wt`: int8 codes in element order, then [row][group] {the halves' scales, their minimums}
  // (formats without halves: the group's in the first of each).
  auto unpack = [&](int kt, unsigned char* wt) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int c = tid + 128 * i, row = c >> 2, gi = c & 3, b = kt * 4 + gi;
      const int q[4] = {raw[i].q.x, raw[i].q.y, raw[i].q.z, raw[i].q.w};
      int lo[4], hi[4];  // elements 4j .., 16 + 4j ..
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        lo[j] = q[j] & 0x0f0f0f0f;
        hi[j] = (q[j] >> 4) & 0x0f0f0f0f;
        if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) {
          lo[j] |= lk_q5_high(raw[i].h.x, 0, j);
          hi[j] |= lk_q5_high(raw[i].h.x, 1, j);
        }
        if constexpr (T == LK_Q6_K) {
          lo[j] |= lk_q6k_high(raw[i].h.x, j);
          hi[j] |= lk_q6k_high(raw[i].h.y, j);
        }
        lo[j] = I::codes(lo[j]);
        hi[j] = I::codes(hi[j]);
      }
      int4* dst = reinterpret_cast<int4*>(wt + row * LK_GT_ROW + gi * 32);
      dst[0] = make_int4(lo[0], lo[1], lo[2], lo[3]);
      dst[1] = make_int4(hi[0], hi[1], hi[2], hi[3]);
      float sc[2], mn[2];
      I::scales(raw[i].s, raw[i].d, raw[i].dd, b, sc, mn);
      reinterpret_cast<float4*>(wt + LK_GT_WEIGHT_ROWS * LK_GT_ROW)[row * 4 + gi] = make_float4(sc[0], sc[1], mn[0], mn[1]);
    }
  };

  float acc[M][2][NT][4] = {};
#pragma unroll
  for (int s = 0; s < LK_GT_STAGES - 1; ++s) {
    if (s < kstages) load_acts(s, s);
    lk_cp_commit();
  }
  fetch(0);
  for (int kt = 0; kt < kstages; ++kt) {
    unsigned char* wt = lk_smem + (kt & 1) * WT;  // (read two stages ago: every warp has passed a barrier since)
    unpack(kt, wt);
    if (kt + 1 < kstages) fetch(kt + 1);  // in flight while this stage multiplies
    lk_cp_wait<LK_GT_STAGES - 2>();
    __syncthreads();  // stage kt's activations and weights are in for every thread; the slot refilled next is free
    if (kt + LK_GT_STAGES - 1 < kstages) load_acts((kt + LK_GT_STAGES - 1) % LK_GT_STAGES, kt + LK_GT_STAGES - 1);
    lk_cp_commit();
    const unsigned char* sb = acts + (kt % LK_GT_STAGES) * AT;
    const float* sx = reinterpret_cast<const float*>(sb + A_ROWS);
    const float4* wf = reinterpret_cast<const float4*>(wt + LK_GT_WEIGHT_ROWS * LK_GT_ROW);
    const int nb = min(4, kb - kt * 4);
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      if (b >= nb) break;
      int af[M][2][4];
      float4 ws[M][2][2];  // rows g and g + 8 of each 16-row tile: {scales, minimums}
#pragma unroll
      for (int mat = 0; mat < M; ++mat)
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          const int i0 = mat * BO + wm * 32 + mt * 16;
          lk_ldmatrix4(af[mat][mt], wt + (i0 + (lane & 7) + 8 * ((lane >> 3) & 1)) * LK_GT_ROW + b * 32 + 16 * (lane >> 4));
#pragma unroll
          for (int h = 0; h < 2; ++h) ws[mat][mt][h] = wf[(i0 + g + 8 * h) * 4 + b];
        }
#pragma unroll
      for (int p = 0; p < P; ++p) {
        int bf[NT][2];
        lk_gt_b_fragments<NT, BN>(bf, sb, p, wn, b);
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const int a = p * BN + wn * NT * 8 + j * 8 + 2 * t;  // activation rows 2t and 2t + 1 of tile j
          const float x[2] = {sx[a * 4 + b], sx[(a + 1) * 4 + b]};
          float xsum[2][2] = {};  // their sums over the group ([0]) or each half ([h]: HALVES), scaled
          if constexpr (I::MIN) {
#pragma unroll
            for (int h = 0; h < (I::HALVES ? 2 : 1); ++h) {
              const int lo = !I::HALVES || h == 0 ? 0x01010101 : 0, hi = !I::HALVES || h == 1 ? 0x01010101 : 0;
              const int ones[4] = {lo, lo, hi, hi};  // (a0, a1: elements 0..15; a2, a3: 16..31)
              int sum[4];
              lk_mma_s8(sum, ones, bf[j][0], bf[j][1]);
              xsum[h][0] = x[0] * lk_sum_f32(sum[0]);
              xsum[h][1] = x[1] * lk_sum_f32(sum[1]);
            }
          }
#pragma unroll
          for (int mat = 0; mat < M; ++mat)
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
              const int* A = af[mat][mt];
              if constexpr (I::HALVES) {  // a0, a1: elements 0..15 of the group; a2, a3: 16..31
                const int A0[4] = {A[0], A[1], 0, 0}, A1[4] = {0, 0, A[2], A[3]};
                int d0[4], d1[4];
                lk_mma_s8(d0, A0, bf[j][0], bf[j][1]);
                lk_mma_s8(d1, A1, bf[j][0], bf[j][1]);
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                  const float4& w = ws[mat][mt][e >> 1];
                  acc[mat][mt][j][e] += x[e & 1] * w.x * lk_sum_f32(d0[e]);
                  acc[mat][mt][j][e] += x[e & 1] * w.y * lk_sum_f32(d1[e]);
                  if constexpr (I::MIN) acc[mat][mt][j][e] += w.z * xsum[0][e & 1] + w.w * xsum[1][e & 1];
                }
              } else {
                int d[4];
                lk_mma_s8(d, af[mat][mt], bf[j][0], bf[j][1]);
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                  const float4& w = ws[mat][mt][e >> 1];
                  acc[mat][mt][j][e] += x[e & 1] * w.x * lk_sum_f32(d[e]);
                  if constexpr (I::MIN) acc[mat][mt][j][e] += w.z * xsum[0][e & 1];
                }
              }
            }
        }
      }
    }
  }
  lk_gt_store<GLU, M, NT>(acc, bias, y, out0, act0, wm, wn, n, rows);
}
#endif  // LK_WITH_GEMM_TILE

#endif  // LK_WITH_MMA && LK_WITH_BLOCKS
