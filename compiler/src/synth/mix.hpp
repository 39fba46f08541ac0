// How llama.cpp's quantize tool lays types out over a checkpoint's tensors, shared by `synth` (random weights in
// those types) and `quantize` (a checkpoint's weights requantized to them).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

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

// A super-block type's stand-in for rows its 256-element blocks do not fit, as llama.cpp's quantizer falls back
// (tensor_type_fallback in the version .llama/src.tar.xz holds; older versions put Q2_K and Q3_K in IQ4_NL).
inline Type super_block_fallback(Type t) {
  if (t == Type::Q4_K) return Type::Q5_0;
  if (t == Type::Q5_K) return Type::Q5_1;
  if (t == Type::Q6_K) return Type::Q8_0;
  return t == Type::IQ4_XS ? Type::IQ4_NL : Type::Q4_0;  // (Q2_K, Q3_K)
}

// `t` for a matrix of rows of `row` elements: itself where its blocks fit the row, else llama.cpp's fallback (a
// super-block type's 32-element stand-in; f16 where not even 32-element blocks fit).
inline Type fit_rows(Type t, uint64_t row) {
  if (row % ggml::traits_of(t).block_elems == 0) return t;
  return is_super_block(t) && row % 32 == 0 ? super_block_fallback(t) : Type::F16;
}

// The layer a tensor named "blk.N. ..." belongs to, or -1.
inline int layer_of(const std::string& name) {
  if (!name.starts_with("blk.")) return -1;
  int n = -1;
  const char* b = name.data() + 4;
  const auto [p, ec] = std::from_chars(b, name.data() + name.size(), n);
  return ec == std::errc() && *p == '.' ? n : -1;
}

// What llama.cpp's choice of a tensor's type reads of the model.
struct MixModel {
  uint32_t layers = 0;
  uint32_t gqa = 1;      // query heads a key/value head (n_gqa)
  uint32_t experts = 0;  // n_expert
  bool tied = false;     // no output.weight: the embedding is the output
  bool is_70b = false;   // llama.cpp's LLM_TYPE_70B: 80 layers of llama with grouped heads, or of qwen2

  // From the model's architecture and counts (a head count of 0: no grouping).
  static MixModel of(const std::string& arch, uint64_t layers, uint64_t heads, uint64_t kv_heads, uint64_t experts,
                     bool tied) {
    return {.layers = uint32_t(layers),
            .gqa = uint32_t(kv_heads ? heads / kv_heads : 1),
            .experts = uint32_t(experts),
            .tied = tied,
            .is_70b = layers == 80 && ((arch == "llama" && heads != kv_heads) || arch == "qwen2")};
  }
};

// Whether llama.cpp's quantize tool quantizes tensor `name` of `dims` at all: a matrix named *.weight, not a norm,
// the experts' router (its scores stay exact) or the rope factors.
inline bool is_quantized_matrix(const std::string& name, size_t dims) {
  return dims >= 2 && name.ends_with(".weight") && name.find("_norm") == std::string::npos &&
         name.find("ffn_gate_inp") == std::string::npos && name != "rope_freqs.weight";
}

// The type llama.cpp's quantize tool (llama_tensor_get_type) gives matrix `name` (rows of `row` elements; `experts3d`:
// a stack of experts' matrices) when it writes file type `t` (`mixed`: the "_M" mix of q4_k / q5_k; unmixed q4_k, q5_k
// and q3_k are its "_S" types, mxfp4 its MXFP4_MOE), for the file types lane-tune writes and no importance matrix:
// the output (or a tied embedding) in q6_k (q8_0 under q8_0 and mxfp4, or where q6_k's blocks do not fit); attn_v in
// more bits by the type's rule (q2_k: q3_k or q4_k, iq4_*: q5_k with 4 or more query heads a key/value head, the "_M"
// mixes: q6_k in the layers use_more_bits picks, q4_k_s: q5_k in the first 4 layers; a 70B's q3_k / q4_k: q5_k; with 8
// experts: q8_0, attn_k too); ffn_down by the type's rule (q2_k: q3_k; the "_M" mixes: q6_k where use_more_bits; iq4_*
// and q4_k_s: q5_k in the first eighth of the layers); attn_output under q2_k in q3_k, with 8 experts in q5_k for the
// low-bit types; mxfp4: the experts in mxfp4, every other matrix in q8_0. Then fitted to the row (fit_rows).
inline Type llama_type(const std::string& name, uint64_t row, bool experts3d, Type t, bool mixed, const MixModel& m) {
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  const uint32_t l = uint32_t(std::max(layer_of(name), 0));
  const bool q4_k_s = t == Type::Q4_K && !mixed, k_m = mixed && (t == Type::Q4_K || t == Type::Q5_K);
  const bool iq4 = t == Type::IQ4_NL || t == Type::IQ4_XS;
  Type n = t;
  if (!ggml::traits_of(t).quantizable || t == Type::F16 || t == Type::BF16 || t == Type::F32) {
    n = t;  // (llama.cpp's rules are for quantized file types only)
  } else if (name == "output.weight" || (m.tied && name == "token_embd.weight")) {
    if (t == Type::MXFP4 || row % ggml::traits_of(t).block_elems != 0)
      n = Type::Q8_0;
    else if (t != Type::Q8_0)
      n = Type::Q6_K;
  } else if (t == Type::MXFP4) {
    n = experts3d ? Type::MXFP4 : Type::Q8_0;
  } else if (name == "token_embd.weight") {
    n = t;
  } else if (has("attn_v.weight")) {
    if (t == Type::Q2_K)
      n = m.gqa >= 4 ? Type::Q4_K : Type::Q3_K;
    else if (iq4 && m.gqa >= 4)
      n = Type::Q5_K;
    else if (k_m && use_more_bits(l, m.layers))
      n = Type::Q6_K;
    else if (q4_k_s && l < 4)
      n = Type::Q5_K;
    if (m.is_70b && (n == Type::Q3_K || n == Type::Q4_K)) n = Type::Q5_K;
    if (m.experts == 8) n = Type::Q8_0;
  } else if (has("attn_k.weight")) {
    if (m.experts == 8) n = Type::Q8_0;
  } else if (has("attn_q.weight")) {
    // (no rule for these types)
  } else if (has("attn_output.weight")) {
    if (m.experts == 8) {
      if (t == Type::Q2_K || t == Type::Q3_K || iq4 || t == Type::Q4_K) n = Type::Q5_K;
    } else if (t == Type::Q2_K) {
      n = Type::Q3_K;
    }
  } else if (has("ffn_up") || has("ffn_gate")) {
    // (no rule for these types)
  } else if (has("ffn_down")) {
    if (t == Type::Q2_K)
      n = Type::Q3_K;
    else if (k_m && use_more_bits(l, m.layers))
      n = Type::Q6_K;
    else if ((iq4 || q4_k_s) && l < m.layers / 8)
      n = Type::Q5_K;
  }
  return fit_rows(n, row);
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
