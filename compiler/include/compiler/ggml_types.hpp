// ggml's tensor element types: their block shapes, and conversion of their blocks to and from f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace lt::ggml {

// A ggml tensor type, numbered as in GGUF files.
enum class Type : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

// The shape of a type's blocks: how many elements a block holds and how many bytes it takes.
struct Traits {
  std::string_view name;  // as ggml names it: "q8_0", "f16", ...
  uint32_t block_elems;
  uint32_t block_bytes;
  bool dequantizable;  // lane-tune can turn its blocks into f32
  bool quantizable;    // lane-tune can write it from f32
};

// The traits of `t`, or nullopt when `t` is not a type ggml knows.
std::optional<Traits> traits(uint32_t t);
// The traits of a known type (throws lt::Error for an unknown one).
Traits traits_of(Type t);
// The type named `name` ("q8_0", "Q8_0", "bf16", ...), or nullopt.
std::optional<Type> parse_type(std::string_view name);
// The bytes `elems` elements of `t` take; throws lt::Error when `elems` is not a whole number of blocks.
uint64_t row_bytes(Type t, uint64_t elems);

// Converts `out.size()` elements stored as `t` at `in` to f32. `out.size()` must be a whole number of blocks and
// `in` must hold row_bytes(t, out.size()) bytes; throws lt::Error for a type that cannot be dequantized.
void dequantize(Type t, const uint8_t* in, std::span<float> out);
// Writes `in.size()` f32 values as `t` to `out` (row_bytes(t, in.size()) bytes), rounding as ggml's reference
// quantizers do; throws lt::Error for a type lane-tune cannot write.
void quantize(Type t, std::span<const float> in, uint8_t* out);

// IEEE half and bfloat16 conversions, rounding to nearest even.
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

}  // namespace lt::ggml
