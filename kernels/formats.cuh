// The matrix formats a lane reads weights in, each as 16-byte units of a row dequantized in registers.

// A Q8_0 matrix split as the lane uploads it: int8 rows (`q`, k bytes a row) and an f16 scale a 32-block (`s`).
struct lk_q8 {
  const signed char* q;
  const __half* s;
};

// A matrix of plain elements (f32, f16 or bf16), k elements a row.
template <class W>
struct lk_plain {
  const W* w;
};

// How a format's rows read: E elements a 16-byte unit; `load` fetches unit u of row `row` as it is stored (a Raw),
// `expand` dequantizes it into w[0..E). Loads come apart from their use so that a GEMV can have several in flight.
template <class M>
struct lk_fmt;

template <>
struct lk_fmt<lk_q8> {
  static constexpr int E = 16;
  struct Raw {
    int4 q;
    __half s;
  };
  static LK_DEVICE Raw load(const lk_q8& m, size_t row, int k, int u) {
    return {__ldg(reinterpret_cast<const int4*>(m.q + row * k) + u), m.s[row * (k / 32) + u / 2]};
  }
  static LK_DEVICE void expand(const Raw& r, float* w) {
    const float s = __half2float(r.s);
    const signed char* b = reinterpret_cast<const signed char*>(&r.q);
#pragma unroll
    for (int i = 0; i < 16; ++i) w[i] = s * (float)b[i];
  }
};

template <class W>
struct lk_fmt<lk_plain<W>> {
  static constexpr int E = 16 / sizeof(W);
  struct Raw {
    int4 q;
  };
  static LK_DEVICE Raw load(const lk_plain<W>& m, size_t row, int k, int u) {
    return {__ldg(reinterpret_cast<const int4*>(m.w + row * k) + u)};
  }
  static LK_DEVICE void expand(const Raw& r, float* w) {
    const W* b = reinterpret_cast<const W*>(&r.q);
#pragma unroll
    for (int i = 0; i < E; ++i) w[i] = lk_float(b[i]);
  }
};

#if LK_WITH_BLOCKS
// A block-format matrix (Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, MXFP4; T its ggml type number, shapes.cuh) as
// the lane uploads it: the checkpoint's blocks split into planes (lk_plane_bytes; lk_repack lays them out), each
// 32-group of a row one 16-byte unit of 4-bit codes, byte j holding element j (low nibble) and j + 16 (high).
template <int T>
struct lk_blk {
  const unsigned char* q;  // the 4-bit codes, 16 bytes a group
  const unsigned char* h;  // the high bits: Q5 4 bytes a group (bit j: element j's fifth), Q6_K 8 (bits 2j, 2j + 1)
  const unsigned char* s;  // the scales: a group's (Q4_0/Q5_0 d; Q4_1/Q5_1 d, m; MXFP4 its exponent) or a
                           // 256-block's (Q4_K/Q5_K d, dmin, 12 bytes of 6-bit scales and mins; Q6_K 16 int8 scales)
  const __half* d;         // Q6_K: a 256-block's d
};

// A K-quant 256-block's sub-block j (0..7): its 6-bit scale and min from the 12 packed bytes (ggml's
// get_scale_min_k4).
LK_DEVICE void lk_scale_min_k4(int j, const unsigned char* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// A unit is a 32-group. Each weight is computed by the CPU reference's expression with the same roundings (no fused
// multiply-add), so the lane's weights are the reference's bit for bit.
template <int T>
struct lk_fmt<lk_blk<T>> {
  static constexpr int E = 32;
  static constexpr bool K = T == LK_Q4_K || T == LK_Q5_K || T == LK_Q6_K;
  struct Raw {
    int4 q;
    uint2 h;
    int4 s;  // the group's scale bytes, or a 256-block's 16
    __half d;
    int sub;  // the group's place in its 256-block
  };
  static LK_DEVICE Raw load(const lk_blk<T>& m, size_t row, int k, int u) {
    Raw r;
    const size_t g = row * (size_t)(k / 32) + (size_t)u;
    r.q = __ldg(reinterpret_cast<const int4*>(m.q) + g);
    if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) r.h.x = __ldg(reinterpret_cast<const unsigned*>(m.h) + g);
    if constexpr (T == LK_Q6_K) r.h = __ldg(reinterpret_cast<const uint2*>(m.h) + g);
    if constexpr (T == LK_Q4_0 || T == LK_Q5_0) r.s.x = __ldg(reinterpret_cast<const unsigned short*>(m.s) + g);
    if constexpr (T == LK_Q4_1 || T == LK_Q5_1) r.s.x = (int)__ldg(reinterpret_cast<const unsigned*>(m.s) + g);
    if constexpr (T == LK_MXFP4) r.s.x = __ldg(m.s + g);
    if constexpr (K) {
      const size_t sb = row * (size_t)(k / 256) + (size_t)(u / 8);
      r.sub = u % 8;
      if constexpr (T == LK_Q6_K) {
        r.s.x = __ldg(reinterpret_cast<const unsigned short*>(m.s + sb * 16) + r.sub);
        r.d = m.d[sb];
      } else {
        r.s = __ldg(reinterpret_cast<const int4*>(m.s) + sb);
      }
    }
    return r;
  }
  static LK_DEVICE void expand(const Raw& r, float* w) {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(&r.q);
    int code[32];
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      code[j] = b[j] & 0xf;
      code[j + 16] = b[j] >> 4;
    }
    if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) {
#pragma unroll
      for (int j = 0; j < 32; ++j) code[j] |= (int)((r.h.x >> j) & 1u) << 4;
    }
    if constexpr (T == LK_Q4_0 || T == LK_Q5_0) {
      const float d = __half2float(__ushort_as_half((unsigned short)r.s.x));
      const int off = T == LK_Q4_0 ? 8 : 16;
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j] = __fmul_rn(d, (float)(code[j] - off));
    } else if constexpr (T == LK_Q4_1 || T == LK_Q5_1) {
      const float d = __half2float(__ushort_as_half((unsigned short)(r.s.x & 0xffff)));
      const float m = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x >> 16)));
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j] = __fadd_rn(__fmul_rn(d, (float)code[j]), m);
    } else if constexpr (T == LK_MXFP4) {
      const unsigned e = (unsigned)r.s.x & 0xff;
      const float d = __uint_as_float(e < 2 ? (0x00200000u << e) : ((e - 1) << 23));
      constexpr signed char kv[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j] = __fmul_rn(d, (float)kv[code[j]]);
    } else if constexpr (T == LK_Q4_K || T == LK_Q5_K) {
      const unsigned char* sb = reinterpret_cast<const unsigned char*>(&r.s);
      const float d = __half2float(*reinterpret_cast<const __half*>(sb));
      const float dmin = __half2float(*reinterpret_cast<const __half*>(sb + 2));
      int sc, mn;
      lk_scale_min_k4(r.sub, sb + 4, sc, mn);
      const float d1 = __fmul_rn(d, (float)sc), m1 = __fmul_rn(dmin, (float)mn);
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j] = __fsub_rn(__fmul_rn(d1, (float)code[j]), m1);
    } else if constexpr (T == LK_Q6_K) {
      const float d = __half2float(r.d);
      const int sc0 = (signed char)(r.s.x & 0xff), sc1 = (signed char)((r.s.x >> 8) & 0xff);
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        const int hi = j < 16 ? (int)((r.h.x >> (2 * j)) & 3u) : (int)((r.h.y >> (2 * (j - 16))) & 3u);
        w[j] = __fmul_rn(d, (float)((j < 16 ? sc0 : sc1) * ((code[j] | (hi << 4)) - 32)));
      }
    }
  }
};
#endif  // LK_WITH_BLOCKS

// E consecutive activations as sums' operands.
template <int E>
LK_DEVICE void lk_load(const lk_act* p, lk_acc* out) {
  if constexpr (E == 4) {
    if constexpr (sizeof(lk_act) == 4) {
      const float4 a = *reinterpret_cast<const float4*>(p);
      out[0] = a.x;
      out[1] = a.y;
      out[2] = a.z;
      out[3] = a.w;
    } else {
      const double2 a = reinterpret_cast<const double2*>(p)[0], b = reinterpret_cast<const double2*>(p)[1];
      out[0] = a.x;
      out[1] = a.y;
      out[2] = b.x;
      out[3] = b.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < E; i += 8) lk_load8(p + i, out + i);
  }
}

// The int8 numerics (LK_INT8 1: one word an activation; 2: a second word for the residual): a 32-block of activations
// as d = max|x| / 127 and q = x * (127 / max|x|) rounded to the nearest (ties to even), q = 0 where the block is zero.
// The decode GEMV, the prefill GEMM and the CPU model of the tests quantize by this one rule.
#ifndef LK_INT8
#define LK_INT8 0
#endif
LK_DEVICE float lk_i8_scale(float amax) {
  return amax / 127.f;
}
LK_DEVICE float lk_i8_inv(float amax) {
  return amax > 0.f ? 127.f / amax : 0.f;
}
LK_DEVICE int lk_i8_q(float x, float inv) {
  return __float2int_rn(x * inv);
}
LK_DEVICE int lk_i8_pack(int a, int b, int c, int d) {
  return (a & 0xff) | ((b & 0xff) << 8) | ((c & 0xff) << 16) | (int)((unsigned)d << 24);
}
