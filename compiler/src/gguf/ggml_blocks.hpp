// The per-block converters behind ggml::dequantize and ggml::quantize, and little-endian loads and stores.
#pragma once

#include <cstdint>
#include <cstring>

#include "compiler/ggml_types.hpp"

namespace lt::ggml::detail {

// Turns one block at `in` into block_elems floats at `out`.
using BlockDequantizer = void (*)(const uint8_t* in, float* out);
// Turns block_elems floats at `in` into one block at `out`.
using BlockQuantizer = void (*)(const float* in, uint8_t* out);

// The block converter of a block format, or nullptr when lane-tune has none.
BlockDequantizer block_dequantizer(Type t);
BlockQuantizer block_quantizer(Type t);
// A quicker quantizer of `t` with coarser fits (Q4_K, Q6_K), for random weights where speed matters more than
// accuracy; the same as block_quantizer for other types.
BlockQuantizer block_quantizer_fast(Type t);

// The 6-bit scale and min of group j (0..7) in a Q4_K/Q5_K super-block's 12 packed bytes.
void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m);

// MXFP4's sixteen E2M1 codes, doubled so they are integers (the scale is halved to match).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
// The multiplier of an MXFP4 block's E8M0 exponent byte e, halved for the doubled codes: 2^(e-128).
inline float mxfp4_scale(uint8_t e) {
  uint32_t bits = e < 2 ? (0x00200000u << e) : (uint32_t(e - 1) << 23);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// IQ4_NL's and IQ4_XS's sixteen non-linear codes (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
// The 6-bit scale of sub-block `ib` (0..7) of an IQ4_XS super-block, stored offset by 32: its low 4 bits in
// scales_l[ib / 2] (nibble ib % 2), its high 2 in scales_h (bits 2 ib, 2 ib + 1).
inline int iq4_xs_scale(uint16_t scales_h, const uint8_t* scales_l, int ib) {
  return ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | (((scales_h >> (2 * ib)) & 3) << 4);
}

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store_u16(uint8_t* p, uint16_t v) {
  std::memcpy(p, &v, 2);
}
inline void store_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

}  // namespace lt::ggml::detail
