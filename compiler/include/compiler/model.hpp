// Model recognition: one reading of a checkpoint's metadata and tensors that the lane compiler and the CPU
// reference share, with llama.cpp's semantics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/gguf.hpp"

namespace lt::model {

enum class Arch { Llama, Qwen2, Qwen3 };

// How rope pairs a head's values: llama rotates adjacent pairs (2i, 2i+1); qwen2/qwen3 (NeoX) rotate i with i + d/2.
enum class RopeMode { Adjacent, Neox };

// Rope scaling of the frequencies (kind None: plain rope). Llama3: each pair's frequency divided by the llama3 factor
// (from rope_freqs.weight when present, else computed from the parameters below); Linear: llama.cpp's
// `rope.scaling.factor` reading, every frequency divided by `factor`.
struct RopeScaling {
  enum class Kind { None, Llama3, Linear } kind = Kind::None;
  float factor = 1.f;
  float low_freq_factor = 1.f;
  float high_freq_factor = 4.f;
  uint32_t original_context = 8192;
};

// One transformer block's tensors; optional ones are null when the checkpoint has none.
struct Layer {
  const gguf::TensorInfo* attn_norm = nullptr;
  const gguf::TensorInfo* wq = nullptr;
  const gguf::TensorInfo* wk = nullptr;
  const gguf::TensorInfo* wv = nullptr;
  const gguf::TensorInfo* wo = nullptr;
  const gguf::TensorInfo* bq = nullptr;  // qwen2's biases
  const gguf::TensorInfo* bk = nullptr;
  const gguf::TensorInfo* bv = nullptr;
  const gguf::TensorInfo* q_norm = nullptr;  // qwen3's per-head norms
  const gguf::TensorInfo* k_norm = nullptr;
  const gguf::TensorInfo* ffn_norm = nullptr;
  const gguf::TensorInfo* w_gate = nullptr;
  const gguf::TensorInfo* w_up = nullptr;
  const gguf::TensorInfo* w_down = nullptr;
};

// A recognized dense decoder: hyperparameters and the binding of every tensor.
struct Model {
  Arch arch = Arch::Llama;
  std::string architecture;  // the GGUF name: "llama", "qwen2", "qwen3"
  std::string name;          // general.name, or the architecture when absent
  uint32_t layers = 0;
  uint32_t d_model = 0;
  uint32_t heads = 0;
  uint32_t kv_heads = 0;
  uint32_t head_dim = 0;   // a key's (and query's) width
  uint32_t value_dim = 0;  // a value's width
  uint32_t ffn = 0;
  uint32_t vocab = 0;
  uint32_t context = 0;  // the trained context length
  float rope_base = 10000.f;
  RopeMode rope_mode = RopeMode::Adjacent;
  RopeScaling scaling;
  float norm_eps = 1e-5f;
  bool tied_output = false;  // the output matrix is the token embedding
  bool qkv_bias = false;
  bool qk_norm = false;

  const gguf::TensorInfo* token_embd = nullptr;
  const gguf::TensorInfo* output_norm = nullptr;
  const gguf::TensorInfo* output = nullptr;  // == token_embd when tied
  // llama's rope frequency factors (llama3 scaling as llama.cpp's converter stores it), null when absent; when present
  // they override the scaling keys: each pair's inverse frequency is divided by its factor.
  const gguf::TensorInfo* rope_freqs = nullptr;
  std::vector<float> rope_freq_factors;  // rope_freqs' values (head_dim/2), empty when absent
  std::vector<Layer> layer;

  uint32_t group() const { return heads / kv_heads; }  // query heads a key/value head serves
  float attention_scale() const;                       // 1/sqrt(head_dim)
  // Rope's inverse frequencies for the head's head_dim/2 pairs, scaling applied as llama.cpp applies it.
  std::vector<double> rope_inv_freq() const;
  // Bytes of every weight tensor, and of those a decode step reads (the embedding only for one row).
  uint64_t weight_bytes() const;
  uint64_t decode_bytes() const;
};

// Recognizes `file`; throws lt::Error naming an unsupported architecture, a missing key, a missing tensor, a tensor of
// the wrong shape or type, or a tensor the architecture does not use (llama.cpp refuses those too). The model points
// into `file`'s tensor infos: keep the file alive while it is used.
Model recognize(const gguf::File& file);

const char* to_string(Arch a);

}  // namespace lt::model
