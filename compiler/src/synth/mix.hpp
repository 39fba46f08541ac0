// How llama.cpp's quantize tool lays types out over a checkpoint's tensors, shared by `synth` (random weights in
// those types) and `quantize` (a checkpoint's weights requantized to them).
#pragma once

#include <cstdint>

#include "compiler/ggml_types.hpp"

namespace lt::synth::detail {

using ggml::Type;

// A type of 256-element super-blocks, which llama.cpp's quantizer swaps for one of 32-element blocks where a row is
// not whole super-blocks.
inline bool is_super_block(Type t) {
  return t == Type::Q2_K || t == Type::Q3_K || t == Type::Q4_K || t == Type::Q5_K || t == Type::Q6_K ||
         t == Type::IQ4_XS;
}

// llama.cpp's choice of the layers whose attn_v and ffn_down a "_M" mix keeps in more bits.
inline bool use_more_bits(uint32_t i, uint32_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// A super-block type's stand-in for rows its 256-element blocks do not fit, as llama.cpp's quantizer falls back.
inline Type super_block_fallback(Type t) {
  if (t == Type::Q4_K) return Type::Q5_0;
  if (t == Type::Q5_K) return Type::Q5_1;
  return t == Type::Q6_K ? Type::Q8_0 : Type::IQ4_NL;  // (Q2_K, Q3_K, IQ4_XS)
}

// `t` for a matrix of rows of `row` elements: itself where its blocks fit the row, else llama.cpp's fallback (a
// super-block type's 32-element stand-in; f16 where not even 32-element blocks fit).
inline Type fit_rows(Type t, uint64_t row) {
  if (row % ggml::traits_of(t).block_elems == 0) return t;
  return is_super_block(t) && row % 32 == 0 ? super_block_fallback(t) : Type::F16;
}

// llama.cpp's file_type number for a checkpoint whose matrices are `t` (`mixed`: its "_M" mix).
inline uint32_t file_type(Type t, bool mixed) {
  switch (t) {
    case Type::Q4_1:
      return 3;
    case Type::Q5_0:
      return 8;
    case Type::Q5_1:
      return 9;
    case Type::Q5_K:
      return mixed ? 17 : 16;
    case Type::MXFP4:
      return 38;
    case Type::IQ4_NL:
      return 25;
    case Type::IQ4_XS:
      return 30;
    case Type::F32:
      return 0;
    case Type::F16:
      return 1;
    case Type::Q4_0:
      return 2;
    case Type::Q8_0:
      return 7;
    case Type::Q4_K:
      return mixed ? 15 : 14;
    case Type::Q6_K:
      return 18;
    case Type::Q2_K:
      return 10;
    case Type::Q3_K:
      return 11;
    case Type::BF16:
      return 32;
    default:
      return 0;
  }
}

}  // namespace lt::synth::detail
