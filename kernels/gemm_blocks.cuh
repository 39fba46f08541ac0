// The int8 numerics' prefill GEMM over a block-format matrix (Q4_0 .. Q6_K, MXFP4: formats.cuh's lk_blk) on the
// tensor cores, read in place as llama.cpp's mmq reads its blocks: each 32-group's codes go to the mma as int8 (A,
// 16 weight rows) against the chunk's activations quantized by lk_quantize_i8 (B, 8 rows), and the format's scale and
// minimum apply to the integer sums per 32-group.
//
// A lane's A fragment of a 32-group holds its elements 8t .. 8t + 7 (the k order lk_quantize_i8 lays the activations
// in: the mma's k index 4t + e is element 8t + e, 16 + 4t + e is 8t + 4 + e): one 8-byte load of the unit's codes
// (bytes 8 (t % 2) .., low nibbles for t < 2, high for t >= 2), with the high bits from the same elements' bits.
// Q4_0, Q5_0, Q6_K and MXFP4 make their codes signed (the offset taken away, or the E2M1 table); Q4_1, Q5_1, Q4_K and
// Q5_K keep them unsigned and add min x (the activations' 32-group sum), the sum from one more mma with all-ones
// weights. Q6_K scales the two 16-element halves of a group apart: a lane's 8 elements lie in half t / 2, and one mma a
// half takes the other half's lanes as zeros.

#if LK_WITH_MMA && LK_WITH_BLOCKS

// A weight row's 32-group as one lane's share of the mma's A operand: `codes` (elements 8t .. 8t + 3, 8t + 4 .. 8t + 7)
// and the group's scale and minimum (Q6_K: each half's scale, no minimum).
struct lk_mma_group {
  int codes[2];
  float scale[2];
  float min;
};

template <int T>
struct lk_mma_frag {
  static constexpr bool MIN = T == LK_Q4_1 || T == LK_Q5_1 || T == LK_Q4_K || T == LK_Q5_K;
  static constexpr bool HALVES = T == LK_Q6_K;
  static constexpr bool K = T == LK_Q4_K || T == LK_Q5_K || T == LK_Q6_K;
  // What a lane loads of group `b` of row `row` (kb groups a row), as stored.
  struct Raw {
    uint2 q;       // bytes 8 (t % 2) .. 8 (t % 2) + 7 of the codes
    unsigned h;    // the high bits' word that holds the lane's elements
    int4 s;        // the scale bytes: the group's (in .x), a K-quant 256-block's 16, or Q6_K's two (in .x)
    __half d;      // Q6_K: the 256-block's d
  };
  static LK_DEVICE Raw load(const lk_blk<T>& m, size_t row, int kb, int b, int t) {
    Raw r;
    const size_t g = row * (size_t)kb + (size_t)b;
    r.q = __ldg(reinterpret_cast<const uint2*>(m.q) + 2 * g + (t & 1));
    if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) r.h = __ldg(reinterpret_cast<const unsigned*>(m.h) + g);
    if constexpr (T == LK_Q6_K) r.h = __ldg(reinterpret_cast<const unsigned*>(m.h) + 2 * g + (t >> 1));
    if constexpr (T == LK_Q4_0 || T == LK_Q5_0) r.s.x = __ldg(reinterpret_cast<const unsigned short*>(m.s) + g);
    if constexpr (T == LK_Q4_1 || T == LK_Q5_1) r.s.x = (int)__ldg(reinterpret_cast<const unsigned*>(m.s) + g);
    if constexpr (T == LK_MXFP4) r.s.x = __ldg(m.s + g);
    if constexpr (K) {
      const size_t sb = row * (size_t)(kb / 8) + (size_t)(b / 8);
      if constexpr (T == LK_Q6_K) {
        r.s.x = __ldg(reinterpret_cast<const unsigned short*>(m.s + sb * 16) + b % 8);
        r.d = m.d[sb];
      } else {
        r.s = __ldg(reinterpret_cast<const int4*>(m.s) + sb);
      }
    }
    return r;
  }
  // The lane's codes and the group's scales, for lane t of group b.
  static LK_DEVICE lk_mma_group decode(const Raw& r, int b, int t) {
    lk_mma_group o;
    const int shift = 4 * (t >> 1);
    int c[2] = {(int)((r.q.x >> shift) & 0x0f0f0f0fu), (int)((r.q.y >> shift) & 0x0f0f0f0fu)};
    if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) {
      c[0] |= lk_spread1(r.h >> (8 * t)) << 4;
      c[1] |= lk_spread1(r.h >> (8 * t + 4)) << 4;
    }
    if constexpr (T == LK_Q6_K) {
      c[0] |= lk_spread2(r.h >> (16 * (t & 1))) << 4;
      c[1] |= lk_spread2(r.h >> (16 * (t & 1) + 8)) << 4;
    }
    o.min = 0.f;
    if constexpr (T == LK_Q4_0 || T == LK_Q5_0) {
      const unsigned off = T == LK_Q4_0 ? 0x08080808u : 0x10101010u;
      c[0] = (int)__vsub4((unsigned)c[0], off);
      c[1] = (int)__vsub4((unsigned)c[1], off);
      o.scale[0] = __half2float(__ushort_as_half((unsigned short)r.s.x));
    } else if constexpr (T == LK_Q4_1 || T == LK_Q5_1) {
      o.scale[0] = __half2float(__ushort_as_half((unsigned short)(r.s.x & 0xffff)));
      o.min = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x >> 16)));
    } else if constexpr (T == LK_MXFP4) {
      c[0] = lk_mxfp4_bytes(c[0]);
      c[1] = lk_mxfp4_bytes(c[1]);
      const unsigned e = (unsigned)r.s.x & 0xff;
      o.scale[0] = __uint_as_float(e < 2 ? (0x00200000u << e) : ((e - 1) << 23));
    } else if constexpr (T == LK_Q4_K || T == LK_Q5_K) {
      const float d = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x & 0xffff)));
      const float dmin = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x >> 16)));
      int sc, mn;
      lk_scale_min_k4(b % 8, (unsigned)r.s.y, (unsigned)r.s.z, (unsigned)r.s.w, sc, mn);
      o.scale[0] = d * (float)sc;
      o.min = -dmin * (float)mn;
    } else {  // Q6_K: codes offset 32, an int8 scale a half
      c[0] = (int)__vsub4((unsigned)c[0], 0x20202020u);
      c[1] = (int)__vsub4((unsigned)c[1], 0x20202020u);
      const float d = __half2float(r.d);
      o.scale[0] = d * (float)(signed char)(r.s.x & 0xff);
      o.scale[1] = d * (float)(signed char)((r.s.x >> 8) & 0xff);
    }
    o.codes[0] = c[0];
    o.codes[1] = c[1];
    return o;
  }
};

// The activations' B fragment of 8-row group `grp`, word p, 32-group b, and the scales of rows 2t and 2t + 1: from
// lk_quantize_i8's fragment layout (FRAG) or its row-by-row one (gemm_tile's, which the chunk's other GEMMs read).
template <bool FRAG>
LK_DEVICE void lk_b_fragment(const int* xq, int p, int grp, int b, int k, int rows, int lane, uint2& v, float2& s) {
  constexpr int P = LK_INT8 == 2 ? 2 : 1;
  const int kb = k / 32, g = lane >> 2, t = lane & 3;
  const float* scales = reinterpret_cast<const float*>(xq + (size_t)P * rows * k / 4);
  if constexpr (FRAG) {
    const size_t blk = ((size_t)p * (rows / 8) + grp) * kb + b;
    v = __ldg(reinterpret_cast<const uint2*>(xq) + blk * 32 + lane);
    s = __ldg(reinterpret_cast<const float2*>(scales) + blk * 4 + t);
  } else {
    const size_t r = (size_t)p * rows + 8 * grp;
    v = __ldg(reinterpret_cast<const uint2*>(reinterpret_cast<const signed char*>(xq) + (r + g) * k + b * 32) + t);
    s = make_float2(__ldg(scales + (r + 2 * t) * kb + b), __ldg(scales + (r + 2 * t + 1) * kb + b));
  }
}

// lk_gemm_i8qb: lk_gemm_i8q's shape over a block-format matrix. A warp takes 16 output rows and TN groups of 8
// activation rows from blockIdx.y * 8 * TN; per 32-group M * TN * P mmas (Q6_K twice that), and with a minimum one
// more a group and word for the activations' sums. No shared memory, no barrier.
template <int T, bool GLU, int TN, bool FRAG>
__global__ void __launch_bounds__(128)
    lk_gemm_i8qb(lk_blk<T> wg, lk_blk<T> wu, const int* __restrict__ xq, const float* __restrict__ bias,
                 float* __restrict__ y, int k, int n, int rows) {
  lk_pdl_entry();
  using F = lk_mma_frag<T>;
  constexpr int P = LK_INT8 == 2 ? 2 : 1;  // words an activation
  constexpr int M = GLU ? 2 : 1;           // matrices
  constexpr int AH = 2;                    // 32-groups of loads in flight before the first is multiplied
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int row0 = (blockIdx.x * (blockDim.x >> 5) + warp) * 16, grp0 = blockIdx.y * TN;
  if (row0 >= n) return;
  const int kb = k / 32;
  const size_t wr[2] = {(size_t)min(row0 + g, n - 1), (size_t)min(row0 + g + 8, n - 1)};
  const int ones[4] = {0x01010101, 0x01010101, 0x01010101, 0x01010101};
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
        for (int j = 0; j < TN; ++j) lk_b_fragment<FRAG>(xq, p, grp0 + j, b, k, rows, lane, xb[a][p][j], sx[a][p][j]);
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
          const float lo = sx[a][p][j].x, hi = sx[a][p][j].y;  // activation rows 2t and 2t + 1
          int sum[4] = {0, 0, 0, 0};  // the activations' 32-group sums (rows 2t, 2t + 1 in [0], [1])
          if constexpr (F::MIN) lk_mma_s8(sum, ones, b0f, b1f);
#pragma unroll
          for (int mat = 0; mat < M; ++mat) {
            float v[4];
            if constexpr (F::HALVES) {
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
                const lk_mma_group& wg_ = w[mat][e >> 1];
                v[e] = wg_.scale[0] * (float)d0[e] + wg_.scale[1] * (float)d1[e];
              }
            } else {
              const int A[4] = {w[mat][0].codes[0], w[mat][1].codes[0], w[mat][0].codes[1], w[mat][1].codes[1]};
              int d[4];
              lk_mma_s8(d, A, b0f, b1f);
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const lk_mma_group& wg_ = w[mat][e >> 1];
                v[e] = wg_.scale[0] * (float)d[e];
                if constexpr (F::MIN) v[e] += wg_.min * (float)sum[e & 1];
              }
            }
            acc[mat][j][0] += lo * v[0];
            acc[mat][j][1] += hi * v[1];
            acc[mat][j][2] += lo * v[2];
            acc[mat][j][3] += hi * v[3];
          }
        }
    }
  }
  // v[e]: output row row0 + g (+ 8 for e >= 2), activation row 8 (grp0 + j) + 2t (+ 1 for odd e).
#pragma unroll
  for (int j = 0; j < TN; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = 8 * (grp0 + j) + 2 * t + (e & 1), o = row0 + g + (e >= 2 ? 8 : 0);
      if (o >= n) continue;
      float v = acc[0][j][e] + (bias ? bias[o] : 0.f);
      if constexpr (GLU) v = v / (1.f + expf(-v)) * acc[M - 1][j][e];
      y[(size_t)r * n + o] = v;
    }
}

#endif  // LK_WITH_MMA && LK_WITH_BLOCKS
