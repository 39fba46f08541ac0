// ggml's type table and the half-precision conversions every block format builds on.
#include "compiler/ggml_types.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>

#include "compiler/error.hpp"
#include "ggml_blocks.hpp"

namespace lt::ggml {
namespace {

// One row of the type table: the number GGUF stores, and the block shape.
struct Entry {
  uint32_t id;
  Traits traits;
};

constexpr std::array<Entry, 33> kTable{{
    {0, {"f32", 1, 4, true, true}},           {1, {"f16", 1, 2, true, true}},
    {2, {"q4_0", 32, 18, true, true}},        {3, {"q4_1", 32, 20, true, true}},
    {6, {"q5_0", 32, 22, true, true}},        {7, {"q5_1", 32, 24, true, true}},
    {8, {"q8_0", 32, 34, true, true}},        {9, {"q8_1", 32, 36, false, false}},
    {10, {"q2_k", 256, 84, true, true}},     {11, {"q3_k", 256, 110, true, true}},
    {12, {"q4_k", 256, 144, true, true}},     {13, {"q5_k", 256, 176, true, true}},
    {14, {"q6_k", 256, 210, true, true}},     {15, {"q8_k", 256, 292, false, false}},
    {16, {"iq2_xxs", 256, 66, false, false}}, {17, {"iq2_xs", 256, 74, false, false}},
    {18, {"iq3_xxs", 256, 98, false, false}}, {19, {"iq1_s", 256, 50, false, false}},
    {20, {"iq4_nl", 32, 18, true, true}},   {21, {"iq3_s", 256, 110, false, false}},
    {22, {"iq2_s", 256, 82, false, false}},   {23, {"iq4_xs", 256, 136, true, true}},
    {24, {"i8", 1, 1, false, false}},         {25, {"i16", 1, 2, false, false}},
    {26, {"i32", 1, 4, false, false}},        {27, {"i64", 1, 8, false, false}},
    {28, {"f64", 1, 8, false, false}},        {29, {"iq1_m", 256, 56, false, false}},
    {30, {"bf16", 1, 2, true, true}},         {34, {"tq1_0", 256, 54, false, false}},
    {35, {"tq2_0", 256, 66, false, false}},   {39, {"mxfp4", 32, 17, true, true}},
    {0xffffffffu, {"", 0, 0, false, false}},
}};

}  // namespace

std::optional<Traits> traits(uint32_t t) {
  for (const auto& e : kTable)
    if (e.id == t && e.traits.block_elems != 0) return e.traits;
  return std::nullopt;
}

Traits traits_of(Type t) {
  auto tr = traits(static_cast<uint32_t>(t));
  if (!tr) throw Error("unknown ggml type " + std::to_string(static_cast<uint32_t>(t)));
  return *tr;
}

std::optional<Type> parse_type(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& e : kTable)
    if (e.traits.block_elems != 0 && e.traits.name == lower) return static_cast<Type>(e.id);
  return std::nullopt;
}

uint64_t row_bytes(Type t, uint64_t elems) {
  Traits tr = traits_of(t);
  if (elems % tr.block_elems != 0)
    throw Error(std::to_string(elems) + " elements are not a whole number of " + std::string(tr.name) + " blocks of " +
                std::to_string(tr.block_elems));
  return elems / tr.block_elems * tr.block_bytes;
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(bits);
}

uint16_t f32_to_f16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0);  // inf or nan
  if (absx >= 0x477ff000u) return sign | 0x7c00;                                     // rounds past 65504
  if (absx < 0x38800000u) {                                                          // subnormal half or zero
    float a = std::bit_cast<float>(absx);
    float scaled = a * 16777216.0f;  // units of 2^-24, exact
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t mant = absx & 0x7fffff;
  uint32_t exp = (absx >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return sign | static_cast<uint16_t>(h);
}

float bf16_to_f32(uint16_t h) {
  return std::bit_cast<float>(uint32_t(h) << 16);
}

uint16_t f32_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet nan
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

void dequantize(Type t, const uint8_t* in, std::span<float> out) {
  Traits tr = traits_of(t);
  if (out.size() % tr.block_elems != 0) row_bytes(t, out.size());
  if (out.empty()) return;
  const size_t blocks = out.size() / tr.block_elems;
  float* y = out.data();
  switch (t) {
    case Type::F32:
      std::memcpy(y, in, out.size() * 4);
      return;
    case Type::F16:
      for (size_t i = 0; i < out.size(); ++i) y[i] = f16_to_f32(detail::load_u16(in + 2 * i));
      return;
    case Type::BF16:
      for (size_t i = 0; i < out.size(); ++i) y[i] = bf16_to_f32(detail::load_u16(in + 2 * i));
      return;
    default:
      break;
  }
  auto fn = detail::block_dequantizer(t);
  if (!fn) throw Error("lane-tune cannot dequantize " + std::string(tr.name) + " tensors");
  for (size_t b = 0; b < blocks; ++b) fn(in + b * tr.block_bytes, y + b * tr.block_elems);
}

void quantize(Type t, std::span<const float> in, uint8_t* out) {
  Traits tr = traits_of(t);
  if (in.size() % tr.block_elems != 0) row_bytes(t, in.size());
  if (in.empty()) return;
  const size_t blocks = in.size() / tr.block_elems;
  const float* x = in.data();
  switch (t) {
    case Type::F32:
      std::memcpy(out, x, in.size() * 4);
      return;
    case Type::F16:
      for (size_t i = 0; i < in.size(); ++i) detail::store_u16(out + 2 * i, f32_to_f16(x[i]));
      return;
    case Type::BF16:
      for (size_t i = 0; i < in.size(); ++i) detail::store_u16(out + 2 * i, f32_to_bf16(x[i]));
      return;
    default:
      break;
  }
  auto fn = detail::block_quantizer(t);
  if (!fn) throw Error("lane-tune cannot write " + std::string(tr.name) + " tensors");
  for (size_t b = 0; b < blocks; ++b) fn(x + b * tr.block_elems, out + b * tr.block_bytes);
}

}  // namespace lt::ggml
