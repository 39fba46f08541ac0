// Block formats read back to f32: the legacy 32-element blocks, the K-quant super-blocks, and MXFP4.
#include <cmath>

#include "compiler/ggml_types.hpp"
#include "ggml_blocks.hpp"

namespace lt::ggml::detail {
namespace {

float half_at(const uint8_t* p) {
  return f16_to_f32(load_u16(p));
}

// Q4_0: scale d, then 16 bytes of 4-bit codes (low nibbles: elements 0..15, high nibbles: 16..31), offset 8.
void q4_0(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>((qs[j] & 0xf) - 8);
    y[j + 16] = d * static_cast<float>((qs[j] >> 4) - 8);
  }
}

// Q4_1: scale d and minimum m, then 4-bit codes as in Q4_0, value = d*q + m.
void q4_1(const uint8_t* b, float* y) {
  const float d = half_at(b), m = half_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(qs[j] & 0xf) + m;
    y[j + 16] = d * static_cast<float>(qs[j] >> 4) + m;
  }
}

// The fifth bits of a Q5 block's 32 codes: bit j of `qh` belongs to element j.
int fifth_bit(uint32_t qh, int j) {
  return static_cast<int>((qh >> j) & 1u) << 4;
}

// Q5_0: scale d, 32 high bits, then 4-bit low parts as in Q4_0, offset 16.
void q5_0(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const uint32_t qh = load_u32(b + 2);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(((qs[j] & 0xf) | fifth_bit(qh, j)) - 16);
    y[j + 16] = d * static_cast<float>(((qs[j] >> 4) | fifth_bit(qh, j + 16)) - 16);
  }
}

// Q5_1: scale d and minimum m, 32 high bits, 4-bit low parts; value = d*q + m.
void q5_1(const uint8_t* b, float* y) {
  const float d = half_at(b), m = half_at(b + 2);
  const uint32_t qh = load_u32(b + 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>((qs[j] & 0xf) | fifth_bit(qh, j)) + m;
    y[j + 16] = d * static_cast<float>((qs[j] >> 4) | fifth_bit(qh, j + 16)) + m;
  }
}

// Q8_0: scale d, then 32 signed bytes.
void q8_0(const uint8_t* b, float* y) {
  const float d = half_at(b);
  for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(static_cast<int8_t>(b[2 + j]));
}

// Q2_K: 16 bytes of (4-bit scale, 4-bit min) for 16 groups of 16, 64 bytes of 2-bit codes, then d and dmin.
// Each 128 elements read 32 code bytes four times, two bits further each time.
void q2_k(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* q = b + 16;
  const float d = half_at(b + 80), dmin = half_at(b + 82);
  int is = 0;
  for (int half = 0; half < 2; ++half, q += 32) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int part = 0; part < 2; ++part) {
        const uint8_t sc = scales[is++];
        const float dl = d * static_cast<float>(sc & 0xf), ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[16 * part + l] >> shift) & 3) - ml;
      }
    }
  }
}

// Q3_K: 32 bytes of high bits, 64 bytes of 2-bit low parts, 12 bytes of 16 packed 6-bit scales, then d.
// A code's high bit clear means 4 is subtracted.
void q3_k(const uint8_t* b, float* y) {
  const uint8_t* hm = b;
  const uint8_t* q = b + 32;
  const uint8_t* packed = b + 96;
  const float d = half_at(b + 108);
  int8_t scales[16];
  for (int i = 0; i < 16; ++i) {
    const int low = (i < 8) ? (packed[i] & 0xf) : (packed[i - 8] >> 4);
    const int high = (packed[8 + (i % 4)] >> (2 * (i / 4))) & 3;
    scales[i] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
  int is = 0;
  uint8_t m = 1;
  for (int half = 0; half < 2; ++half, q += 32) {
    for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
      for (int part = 0; part < 2; ++part) {
        const float dl = d * static_cast<float>(scales[is++]);
        for (int l = 0; l < 16; ++l) {
          const int k = 16 * part + l;
          const int code = ((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4);
          *y++ = dl * static_cast<float>(code);
        }
      }
    }
  }
}

}  // namespace

void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

namespace {

// Q4_K: d, dmin, 12 bytes of eight 6-bit (scale, min) pairs, then 128 bytes of 4-bit codes; each 64 elements take
// 32 code bytes, low nibbles first.
void q4_k(const uint8_t* b, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* sm = b + 4;
  const uint8_t* q = b + 16;
  for (int g = 0; g < 8; g += 2, q += 32) {
    uint8_t sc, m;
    scale_min_k4(g, sm, sc, m);
    const float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(g + 1, sm, sc, m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xf) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
  }
}

// Q5_K: as Q4_K with 32 bytes of fifth bits after the scales; group g's fifth bits are bit g of each byte.
void q5_k(const uint8_t* b, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* sm = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* q = b + 48;
  for (int g = 0; g < 8; g += 2, q += 32) {
    uint8_t sc, m;
    scale_min_k4(g, sm, sc, m);
    const float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(g + 1, sm, sc, m);
    const float d2 = d * sc, m2 = dmin * m;
    const uint8_t u1 = static_cast<uint8_t>(1u << g), u2 = static_cast<uint8_t>(2u << g);
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((q[l] & 0xf) + ((qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((q[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
  }
}

// Q6_K: 128 bytes of low nibbles, 64 bytes of 2-bit high parts, 16 signed 8-bit scales, then d; codes offset 32.
void q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[is + 0] * q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2] * q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4] * q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6] * q4);
    }
  }
}

// MXFP4: an E8M0 exponent byte, then 16 bytes of E2M1 codes (low nibbles: elements 0..15, high: 16..31).
void mxfp4(const uint8_t* b, float* y) {
  const float d = mxfp4_scale(b[0]);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kMxfp4Values[b[1 + j] & 0xf]);
    y[j + 16] = d * static_cast<float>(kMxfp4Values[b[1 + j] >> 4]);
  }
}

// IQ4_NL: d, then 16 bytes of indices into kIq4Values (low nibbles: elements 0..15, high: 16..31).
void iq4_nl(const uint8_t* b, float* y) {
  const float d = half_at(b);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kIq4Values[b[2 + j] & 0xf]);
    y[j + 16] = d * static_cast<float>(kIq4Values[b[2 + j] >> 4]);
  }
}

// IQ4_XS: d, the scales' high bits (2 bytes) and low bits (4), then 8 groups of 16 bytes of IQ4_NL indices, group
// ib scaled by d (its 6-bit scale - 32).
void iq4_xs(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const uint16_t scales_h = load_u16(b + 2);
  const uint8_t* qs = b + 8;
  for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
    const float dl = d * static_cast<float>(iq4_xs_scale(scales_h, b + 4, ib) - 32);
    for (int j = 0; j < 16; ++j) {
      y[j] = dl * static_cast<float>(kIq4Values[qs[j] & 0xf]);
      y[j + 16] = dl * static_cast<float>(kIq4Values[qs[j] >> 4]);
    }
  }
}

}  // namespace

BlockDequantizer block_dequantizer(Type t) {
  switch (t) {
    case Type::Q4_0:
      return q4_0;
    case Type::Q4_1:
      return q4_1;
    case Type::Q5_0:
      return q5_0;
    case Type::Q5_1:
      return q5_1;
    case Type::Q8_0:
      return q8_0;
    case Type::Q2_K:
      return q2_k;
    case Type::Q3_K:
      return q3_k;
    case Type::Q4_K:
      return q4_k;
    case Type::Q5_K:
      return q5_k;
    case Type::Q6_K:
      return q6_k;
    case Type::MXFP4:
      return mxfp4;
    case Type::IQ4_NL:
      return iq4_nl;
    case Type::IQ4_XS:
      return iq4_xs;
    default:
      return nullptr;
  }
}

}  // namespace lt::ggml::detail
