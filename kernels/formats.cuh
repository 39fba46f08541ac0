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
