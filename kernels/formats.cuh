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
    return {lk_ldw(reinterpret_cast<const int4*>(m.q + row * k) + u), lk_ldw(m.s + row * (k / 32) + u / 2)};
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
    return {lk_ldw(reinterpret_cast<const int4*>(m.w + row * k) + u)};
  }
  static LK_DEVICE void expand(const Raw& r, float* w) {
    const W* b = reinterpret_cast<const W*>(&r.q);
#pragma unroll
    for (int i = 0; i < E; ++i) w[i] = lk_float(b[i]);
  }
};

// One of two matrices by a flag, field by field (a kernel parameter chosen whole goes to local memory).
LK_DEVICE lk_q8 lk_pick(bool second, const lk_q8& a, const lk_q8& b) {
  return {second ? b.q : a.q, second ? b.s : a.s};
}
template <class W>
LK_DEVICE lk_plain<W> lk_pick(bool second, const lk_plain<W>& a, const lk_plain<W>& b) {
  return {second ? b.w : a.w};
}

// The ggml type number of a block-format matrix type (lk_blk<T>: T), 0 for the others.
template <class M>
struct lk_blk_type {
  static constexpr int value = 0;
};

#if LK_WITH_BLOCKS
// A block-format matrix (Q4_0, Q4_1, Q5_0, Q5_1, Q2_K .. Q6_K, MXFP4, IQ4_NL, IQ4_XS; T its ggml type number,
// shapes.cuh) as
// the lane uploads it: the checkpoint's blocks split into planes (lk_plane_bytes; lk_repack lays them out), each
// 32-group of a row one 16-byte unit of 4-bit codes, byte j holding element j (low nibble) and j + 16 (high).
template <int T>
struct lk_blk {
  const unsigned char* q;  // the 4-bit codes, 16 bytes a group
  const unsigned char* h;  // the high bits: Q5 4 bytes a group (lk_q5_high), Q6_K 8 (lk_q6k_high)
  const unsigned char* s;  // the scales: a group's (Q4_0/Q5_0/IQ4_NL d; Q4_1/Q5_1 d, m; MXFP4 its exponent) or a
                           // 256-block's (Q4_K/Q5_K d, dmin, 12 bytes of 6-bit scales and mins, lk_scale_min_k4's
                           // layout; Q6_K 16 int8 scales; IQ4_XS d, the 6-bit scales' high bits (2 bytes), their low
                           // bits (4); Q2_K 16 (scale, min) nibbles; Q3_K 12 bytes of 6-bit scales)
  const __half* d;         // Q6_K, Q3_K: a 256-block's d; Q2_K: its d and dmin
};
template <int T>
struct lk_blk_type<lk_blk<T>> {
  static constexpr int value = T;
};

template <int T>
LK_DEVICE lk_blk<T> lk_pick(bool second, const lk_blk<T>& a, const lk_blk<T>& b) {
  return {second ? b.q : a.q, second ? b.h : a.h, second ? b.s : a.s, second ? b.d : a.d};
}

// 4 bits (of n's low 4) as the low bit of 4 bytes, and 4 2-bit fields (of v's low 8 bits) as the low 2 bits of 4 bytes.
// Q5's fifth bits as lk_repack lays them out (a 32-bit word a group): element 16 h + 4i + e (word i of half h) at bit
// 8e + 4h + i, so that a word of codes' fifth bits is one shift and mask away. Elements 16 half + 4i .. + 3, each its
// fifth bit in bit 4 of its byte (to be OR-ed onto the low nibbles).
LK_DEVICE int lk_q5_high(unsigned h, int half, int i) {
  return (int)(((h >> (4 * half + i)) & 0x01010101u) << 4);
}
// The 4-bit formats without high bits (Q4_0, Q4_1, Q4_K) take a word's high nibbles in place, as 16 times the codes (one
// mask, no shift), into an unsigned-by-signed dp4a (lk_dp4a_us), and the half's sum is shifted down once: the same
// integers (a multiple of 16 shifted by 4 is exact), 3 instructions fewer a unit (session 33: decode 1.002x / 1.003x).
// lk_dp4a_us: dp4a of unsigned bytes `a` by signed bytes `b`, plus c.
LK_DEVICE int lk_dp4a_us(unsigned a, int b, int c) {
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// Q6_K's high bits as lk_repack lays them out (8 bytes a group, a 32-bit word a half of 16 elements): element 4i + e of
// a half at bits 8e + 2i of its half's word, so that a word of codes' high parts is one shift and mask away. Elements
// 4i .. 4i + 3 of the half whose word is `h`, each its high part's value in bits 4..5 of its byte (to be OR-ed onto the
// low nibbles).
LK_DEVICE int lk_q6k_high(unsigned h, int i) {
  return (int)(((h >> (2 * i)) & 0x03030303u) << 4);
}

// A Q4_K / Q5_K 256-block's sub-block j (0..7, known at run time): its 6-bit scale and min from the header's words
// h1, h2, h3 (bytes 4..15, after d and dmin) as lk_repack lays them out: byte 4 + j holds sub-block j's scale (bits
// 0..5) and its min's low 2 bits (6..7), h3's nibble j the min's high 4 bits. Branch-free: the byte by a shift of the
// word j's half names (a byte index known only at run time would put the header in local memory).
LK_DEVICE void lk_scale_min_k4(int j, unsigned h1, unsigned h2, unsigned h3, int& sc, int& m) {
  const unsigned b = (j < 4 ? h1 : h2) >> (8 * (j & 3));
  sc = (int)(b & 63u);
  m = (int)(((b >> 6) & 3u) | (((h3 >> (4 * j)) & 15u) << 2));
}

// Four MXFP4 codes (a byte each, 0..15) as their E2M1 values (doubled) in signed bytes: the magnitudes by byte
// permutation from the table of codes 0..7, the bytes of codes 8..15 negated.
LK_DEVICE int lk_mxfp4_bytes(int codes) {
  const unsigned t = (unsigned)codes & 0x07070707u;
  const unsigned sel = (t & 0x7u) | ((t >> 4) & 0x70u) | ((t >> 8) & 0x700u) | ((t >> 12) & 0x7000u);
  const unsigned mag = __byte_perm(0x03020100u, 0x0c080604u, sel);
  const unsigned neg = (((unsigned)codes & 0x08080808u) >> 3) * 0xffu;  // 0xff in the bytes to negate
  return (int)((__vsub4(0u, mag) & neg) | (mag & ~neg));
}

// Four IQ4 codes (a byte each, 0..15) as their values (kvalues_iq4nl) in signed bytes, by byte permutation from the
// table's halves: codes 0..7 from the first, 8..15 from the second.
LK_DEVICE int lk_iq4_bytes(int codes) {
  const unsigned t = (unsigned)codes & 0x07070707u;
  const unsigned sel = (t & 0x7u) | ((t >> 4) & 0x70u) | ((t >> 8) & 0x700u) | ((t >> 12) & 0x7000u);
  const unsigned lo = __byte_perm(0xBFAD9881u, 0xF6EADDCFu, sel);  // -127 -104 -83 -65 -49 -35 -22 -10
  const unsigned hi = __byte_perm(0x26190D01u, 0x71594535u, sel);  // 1 13 25 38 53 69 89 113
  const unsigned pick = (((unsigned)codes & 0x08080808u) >> 3) * 0xffu;
  return (int)((hi & pick) | (lo & ~pick));
}

// IQ4_XS's 6-bit scale of sub-block j, stored offset by 32: in the header's first word (d, then the high bits' 2
// bytes) and second (the low bits, a nibble a sub-block).
LK_DEVICE int lk_iq4_xs_scale(int j, unsigned h0, unsigned h1) {
  return (int)(((h1 >> (4 * j)) & 0xfu) | (((h0 >> (16 + 2 * j)) & 3u) << 4));
}

// Byte i (0..15) of a 256-block's 16 scale bytes held in a register quadruple: Q2_K's (scale, min) of sub-block i.
LK_DEVICE int lk_byte16(const int4& s, int i) {
  const unsigned w = (unsigned)((i & 8) ? ((i & 4) ? s.w : s.z) : ((i & 4) ? s.y : s.x));
  return (int)((w >> (8 * (i & 3))) & 0xffu);
}

// Q3_K's 6-bit scale of sub-block i (0..15), stored offset by 32, from its 12 packed bytes (words x, y, z): the low
// nibble in byte i % 8 (high nibble for i >= 8), the two high bits in byte 8 + i % 4 (bits 2 (i / 4)).
LK_DEVICE int lk_q3k_scale(const int4& s, int i) {
  const unsigned lb = __byte_perm((unsigned)s.x, (unsigned)s.y, (unsigned)(i & 7)) & 0xffu;
  const unsigned hb = __byte_perm((unsigned)s.z, 0u, (unsigned)(i & 3)) & 0xffu;
  return (int)((i < 8 ? lb & 0xfu : lb >> 4) | (((hb >> (2 * (i >> 2))) & 3u) << 4));
}

// A small non-negative integer (below 2^23) as f32, exactly: its bits put into the mantissa of 2^23, which is then
// taken away (`bias`: more to take away, exactly, while the result stays an integer). Two full-rate operations where the
// conversion instruction runs at a quarter of the rate, and the expansion of a 4-bit format is bound by conversions.
LK_DEVICE float lk_small_float(int v, float bias = 0.f) {
  return __fsub_rn(__int_as_float(0x4B000000 | v), 8388608.f + bias);
}

// The scale bytes of group g (and of its 256-block sb, sub-block `sub` of it) of a block-format matrix as the
// readers take them: the group's in s.x (Q4_0/Q5_0/IQ4_NL d; Q4_1/Q5_1 d, m; MXFP4 its exponent; Q6_K its two int8
// scales), or the 256-block's (Q4_K/Q5_K/Q2_K/Q3_K: 16 bytes; IQ4_XS: 8, in s.x, s.y); the 256-block's d (Q3_K,
// Q6_K) in `d`, d and dmin (Q2_K) in `dd`.
template <int T>
LK_DEVICE void lk_blk_scales(const lk_blk<T>& m, size_t g, size_t sb, int sub, int4& s, __half& d, unsigned& dd) {
  if constexpr (T == LK_Q4_0 || T == LK_Q5_0 || T == LK_IQ4_NL)
    s.x = lk_ldw(reinterpret_cast<const unsigned short*>(m.s) + g);
  if constexpr (T == LK_Q4_1 || T == LK_Q5_1) s.x = (int)lk_ldw(reinterpret_cast<const unsigned*>(m.s) + g);
  if constexpr (T == LK_MXFP4) s.x = lk_ldw(m.s + g);
  if constexpr (T == LK_IQ4_XS) {
    const uint2 h = lk_ldw(reinterpret_cast<const uint2*>(m.s) + sb);
    s.x = (int)h.x;
    s.y = (int)h.y;
  }
  if constexpr (T == LK_Q2_K || T == LK_Q3_K || T == LK_Q4_K || T == LK_Q5_K)
    s = lk_ldw(reinterpret_cast<const int4*>(m.s) + sb);
  if constexpr (T == LK_Q2_K) dd = lk_ldw(reinterpret_cast<const unsigned*>(m.d) + sb);
  if constexpr (T == LK_Q6_K) s.x = lk_ldw(reinterpret_cast<const unsigned short*>(m.s + sb * 16) + sub);
  if constexpr (T == LK_Q3_K || T == LK_Q6_K) d = lk_ldw(m.d + sb);
}

// A unit is a 32-group. Each weight is computed by the CPU reference's expression with the same roundings (no fused
// multiply-add), so the lane's weights are the reference's bit for bit.
template <int T>
struct lk_fmt<lk_blk<T>> {
  static constexpr int E = 32;
  struct Raw {
    int4 q;
    uint2 h;  // the high bits
    int4 s;       // the scale bytes, the 256-block's d and (Q2_K) d and dmin: lk_blk_scales
    __half d;
    unsigned dd;
    int sub;  // the group's place in its 256-block
  };
  static LK_DEVICE Raw load(const lk_blk<T>& m, size_t row, int k, int u) {
    Raw r;
    const size_t g = row * (size_t)(k / 32) + (size_t)u;
    r.q = lk_ldw(reinterpret_cast<const int4*>(m.q) + g);
    if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) r.h.x = lk_ldw(reinterpret_cast<const unsigned*>(m.h) + g);
    if constexpr (T == LK_Q6_K) r.h = lk_ldw(reinterpret_cast<const uint2*>(m.h) + g);
    r.sub = u % 8;
    lk_blk_scales(m, g, row * (size_t)(k / 256) + (size_t)(u / 8), r.sub, r.s, r.d, r.dd);
    return r;
  }
  // The 256-block formats with a 16-byte header (Q2_K .. Q5_K): a decode GEMV's lane loads one word of it (the
  // word its group's place names, 0..3) and `share` hands the four words around the 8 lanes of the block (lanes
  // whose units are a 256-block's 8 groups in order: a warp's lanes take consecutive units), so that a unit in flight
  // holds 5 registers of weights, not 8. For the others `load_part` is `load` and `share` nothing.
  static constexpr bool kSharedHeader = T == LK_Q2_K || T == LK_Q3_K || T == LK_Q4_K || T == LK_Q5_K;
  // Unit u + du of the row (du a multiple of 32 known when the loop unrolls: its addresses the unit u's plus
  // constants, so that a round's loads share one address computation).
  static LK_DEVICE Raw load_part(const lk_blk<T>& m, size_t row, int k, int u, int du = 0) {
    if constexpr (!kSharedHeader) {
      return load(m, row, k, u + du);
    } else {
      Raw r;
      const int4* q = reinterpret_cast<const int4*>(m.q) + row * (size_t)(k / 32) + u;
      r.q = lk_ldw(q + du);
      if constexpr (T == LK_Q5_K)
        r.h.x = lk_ldw(reinterpret_cast<const unsigned*>(m.h) + row * (size_t)(k / 32) + u + du);
      r.sub = u % 8;  // (du a multiple of 8)
      // The header's word u % 4 of the 256-block (u + du) / 8: word 4 ((u + du) / 8) + u % 4 of the row's headers.
      const unsigned* hw = reinterpret_cast<const unsigned*>(m.s) + row * (size_t)(k / 256) * 4 + (u / 8) * 4 + u % 4;
      r.s.x = (int)lk_ldw(hw + du / 2);
      const size_t sb = row * (size_t)(k / 256) + (size_t)((u + du) / 8);
      if constexpr (T == LK_Q2_K) r.dd = lk_ldw(reinterpret_cast<const unsigned*>(m.d) + sb);
      if constexpr (T == LK_Q3_K) r.d = lk_ldw(m.d + sb);
      return r;
    }
  }
  // Every lane of the warp calls it (lane l's unit the (l % 8)-th group of its 256-block).
  // Q4_K / Q5_K: three words, d and dmin, the one of h1 and h2 that holds the lane's sub-block (as both: see
  // lk_scale_min_k4) and h3.
  static LK_DEVICE void share(Raw& r) {
    if constexpr (kSharedHeader) {
      const int src = (int)(threadIdx.x & 24u);
      const int w = r.s.x;
      r.s.x = __shfl_sync(0xffffffffu, w, src);
      if constexpr (T == LK_Q4_K || T == LK_Q5_K) {
        r.s.y = r.s.z = __shfl_sync(0xffffffffu, w, src | (1 + (r.sub >> 2)));
      } else {
        r.s.y = __shfl_sync(0xffffffffu, w, src | 1);
        r.s.z = __shfl_sync(0xffffffffu, w, src | 2);
      }
      r.s.w = __shfl_sync(0xffffffffu, w, src | 3);
    }
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
      for (int j = 0; j < 32; ++j) code[j] |= (int)((r.h.x >> (8 * (j % 4) + 4 * (j / 16) + j % 16 / 4)) & 1u) << 4;
    }
    if constexpr (T == LK_Q4_0 || T == LK_Q5_0) {
      const float d = __half2float(__ushort_as_half((unsigned short)r.s.x));
      const float off = T == LK_Q4_0 ? 8.f : 16.f;
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j] = __fmul_rn(d, lk_small_float(code[j], off));
    } else if constexpr (T == LK_Q4_1 || T == LK_Q5_1) {
      const float d = __half2float(__ushort_as_half((unsigned short)(r.s.x & 0xffff)));
      const float m = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x >> 16)));
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j] = __fadd_rn(__fmul_rn(d, lk_small_float(code[j])), m);
    } else if constexpr (T == LK_MXFP4) {
      const unsigned e = (unsigned)r.s.x & 0xff;
      const float d = __uint_as_float(e < 2 ? (0x00200000u << e) : ((e - 1) << 23));
      // The E2M1 values (doubled) as bytes, looked up by byte permutation: codes 0..7 and 8..15 (their negatives).
      const unsigned lo0 = 0x03020100u, lo1 = 0x0c080604u;
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        const int v = (int)(__byte_perm(lo0, lo1, (unsigned)(code[j] & 7)) & 0xffu);
        w[j] = __fmul_rn(d, (code[j] & 8) && v ? -lk_small_float(v) : lk_small_float(v));  // (code 8: +0, as 0)
      }
    } else if constexpr (T == LK_IQ4_NL || T == LK_IQ4_XS) {
      // The codes' values (-127..113) taken up by 128 to read as small floats; d (IQ4_XS: d times its scale - 32).
      float d = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x & 0xffff)));
      if constexpr (T == LK_IQ4_XS)
        d = __fmul_rn(d, lk_small_float(lk_iq4_xs_scale(r.sub, (unsigned)r.s.x, (unsigned)r.s.y), 32.f));
#pragma unroll
      for (int j = 0; j < 32; j += 4) {
        const int c = code[j] | (code[j + 1] << 8) | (code[j + 2] << 16) | (code[j + 3] << 24);
        const unsigned v = (unsigned)lk_iq4_bytes(c) ^ 0x80808080u;  // each value + 128 (its sign bit flipped)
#pragma unroll
        for (int e = 0; e < 4; ++e) w[j + e] = __fmul_rn(d, lk_small_float((int)((v >> (8 * e)) & 0xffu), 128.f));
      }
    } else if constexpr (T == LK_Q2_K) {  // a sub-block of 16 a half: d (scale nibble) q - dmin (min nibble)
      const float d = __half2float(__ushort_as_half((unsigned short)(r.dd & 0xffff)));
      const float dmin = __half2float(__ushort_as_half((unsigned short)(r.dd >> 16)));
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int sm = lk_byte16(r.s, 2 * r.sub + half);
        const float dl = __fmul_rn(d, lk_small_float(sm & 0xf)), ml = __fmul_rn(dmin, lk_small_float(sm >> 4));
#pragma unroll
        for (int j = 16 * half; j < 16 * half + 16; ++j) w[j] = __fsub_rn(__fmul_rn(dl, lk_small_float(code[j])), ml);
      }
    } else if constexpr (T == LK_Q3_K) {  // a sub-block of 16 a half: d (its scale - 32) (code - 4)
      const float d = __half2float(r.d);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const float dl = __fmul_rn(d, lk_small_float(lk_q3k_scale(r.s, 2 * r.sub + half), 32.f));
#pragma unroll
        for (int j = 16 * half; j < 16 * half + 16; ++j) w[j] = __fmul_rn(dl, lk_small_float(code[j], 4.f));
      }
    } else if constexpr (T == LK_Q4_K || T == LK_Q5_K) {
      const float d = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x & 0xffff)));
      const float dmin = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x >> 16)));
      int sc, mn;
      lk_scale_min_k4(r.sub, (unsigned)r.s.y, (unsigned)r.s.z, (unsigned)r.s.w, sc, mn);
      const float d1 = __fmul_rn(d, lk_small_float(sc)), m1 = __fmul_rn(dmin, lk_small_float(mn));
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j] = __fsub_rn(__fmul_rn(d1, lk_small_float(code[j])), m1);
    } else if constexpr (T == LK_Q6_K) {
      // d times float(sc * q): float(sc) * float(q) is that product exactly (both small integers).
      const float d = __half2float(r.d);
      const float sc0 = (float)(signed char)(r.s.x & 0xff), sc1 = (float)(signed char)((r.s.x >> 8) & 0xff);
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        const int hi = (int)(((j < 16 ? r.h.x : r.h.y) >> (8 * (j % 4) + 2 * (j % 16 / 4))) & 3u);
        w[j] = __fmul_rn(d, __fmul_rn(j < 16 ? sc0 : sc1, lk_small_float(code[j] | (hi << 4), 32.f)));
      }
    }
  }

  // The int8 numerics: the unit's codes against 32 int8 activations `a` (8 packed words, elements in order) of scale
  // `da`, summed in integers by dp4a (each half apart: Q6_K scales them apart), then scaled by the format: the unit's
  // share of the row's sum.
  static LK_DEVICE float dot(const Raw& r, const int (&a)[8], float da) {
    const int* q = reinterpret_cast<const int*>(&r.q);
    int s0 = 0, s1 = 0, a0 = 0, a1 = 0;  // the halves' (elements 0..15, 16..31) products and activations' sums
    constexpr bool kHi16 = (T == LK_Q4_0 || T == LK_Q4_1 || T == LK_Q4_K);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      // Elements 4i.., 16 + 4i.. (kHi16: 16 times the second half's codes)
      int lo = q[i] & 0x0f0f0f0f, hi = kHi16 ? q[i] & (int)0xf0f0f0f0u : (q[i] >> 4) & 0x0f0f0f0f;
      if constexpr (T == LK_Q5_0 || T == LK_Q5_1 || T == LK_Q5_K) {
        lo |= lk_q5_high(r.h.x, 0, i);
        hi |= lk_q5_high(r.h.x, 1, i);
      }
      if constexpr (T == LK_Q6_K) {
        lo |= lk_q6k_high(r.h.x, i);
        hi |= lk_q6k_high(r.h.y, i);
      }
      if constexpr (T == LK_MXFP4) {  // codes to the E2M1 values as signed bytes
        lo = lk_mxfp4_bytes(lo);
        hi = lk_mxfp4_bytes(hi);
      }
      if constexpr (T == LK_IQ4_NL || T == LK_IQ4_XS) {  // codes to their values as signed bytes
        lo = lk_iq4_bytes(lo);
        hi = lk_iq4_bytes(hi);
      }
      if constexpr (T == LK_Q3_K) {  // codes 0..7 to -4..3
        lo = (int)__vsub4((unsigned)lo, 0x04040404u);
        hi = (int)__vsub4((unsigned)hi, 0x04040404u);
      }
      s0 = __dp4a(lo, a[i], s0);
      s1 = kHi16 ? lk_dp4a_us((unsigned)hi, a[4 + i], s1) : __dp4a(hi, a[4 + i], s1);
      a0 = __dp4a(0x01010101, a[i], a0);
      a1 = __dp4a(0x01010101, a[4 + i], a1);
    }
    if constexpr (kHi16) s1 >>= 4;
    if constexpr (T == LK_Q4_0 || T == LK_Q5_0) {
      const float d = __half2float(__ushort_as_half((unsigned short)r.s.x));
      return d * (da * (float)(s0 + s1 - (T == LK_Q4_0 ? 8 : 16) * (a0 + a1)));
    } else if constexpr (T == LK_Q4_1 || T == LK_Q5_1) {
      const float d = __half2float(__ushort_as_half((unsigned short)(r.s.x & 0xffff)));
      const float m = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x >> 16)));
      return da * (d * (float)(s0 + s1) + m * (float)(a0 + a1));
    } else if constexpr (T == LK_MXFP4) {
      const unsigned e = (unsigned)r.s.x & 0xff;
      return __uint_as_float(e < 2 ? (0x00200000u << e) : ((e - 1) << 23)) * (da * (float)(s0 + s1));
    } else if constexpr (T == LK_IQ4_NL || T == LK_IQ4_XS) {
      float d = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x & 0xffff)));
      if constexpr (T == LK_IQ4_XS) d *= (float)(lk_iq4_xs_scale(r.sub, (unsigned)r.s.x, (unsigned)r.s.y) - 32);
      return d * (da * (float)(s0 + s1));
    } else if constexpr (T == LK_Q2_K) {  // the halves' scales and mins
      const float d = __half2float(__ushort_as_half((unsigned short)(r.dd & 0xffff)));
      const float dmin = __half2float(__ushort_as_half((unsigned short)(r.dd >> 16)));
      const int sm0 = lk_byte16(r.s, 2 * r.sub), sm1 = lk_byte16(r.s, 2 * r.sub + 1);
      return da * (d * ((float)(sm0 & 0xf) * (float)s0 + (float)(sm1 & 0xf) * (float)s1) -
                   dmin * ((float)(sm0 >> 4) * (float)a0 + (float)(sm1 >> 4) * (float)a1));
    } else if constexpr (T == LK_Q3_K) {
      const float sc0 = (float)(lk_q3k_scale(r.s, 2 * r.sub) - 32), sc1 = (float)(lk_q3k_scale(r.s, 2 * r.sub + 1) - 32);
      return __half2float(r.d) * da * (sc0 * (float)s0 + sc1 * (float)s1);
    } else if constexpr (T == LK_Q4_K || T == LK_Q5_K) {
      const float d = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x & 0xffff)));
      const float dmin = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x >> 16)));
      int sc, mn;
      lk_scale_min_k4(r.sub, (unsigned)r.s.y, (unsigned)r.s.z, (unsigned)r.s.w, sc, mn);
      return da * (d * (float)sc * (float)(s0 + s1) - dmin * (float)mn * (float)(a0 + a1));
    } else {  // Q6_K: codes offset 32, an int8 scale a half
      const float sc0 = (float)(signed char)(r.s.x & 0xff), sc1 = (float)(signed char)((r.s.x >> 8) & 0xff);
      return __half2float(r.d) * da * (sc0 * (float)(s0 - 32 * a0) + sc1 * (float)(s1 - 32 * a1));
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

// One word of the int8 rule over a lane's 4 values, the 8 lanes of a 32-block (lanes 8i .. 8i + 7) together: the
// block's scale `d`, the values' codes packed (the return), and the values left as their residual (the next word's).
LK_DEVICE int lk_i8_quad(float (&v)[4], float& d) {
  float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
  amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
  amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
  amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 4));
  d = lk_i8_scale(amax);
  const float inv = lk_i8_inv(amax);
  int q[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    q[e] = lk_i8_q(v[e], inv);
    v[e] -= d * (float)q[e];
  }
  return lk_i8_pack(q[0], q[1], q[2], q[3]);
}
