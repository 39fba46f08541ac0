// Model recognition: one reading of a checkpoint's metadata and tensors that the lane compiler and the CPU
// reference share, with llama.cpp's semantics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/gguf.hpp"

namespace lt::model {

// The architectures lane-tune reads: dense llama, qwen2, qwen3, gemma2 and gemma3 (sandwich norms, GELU, local and
// global layers; gemma2's attention and final logits softcapped); mixtures of experts qwen2moe (a shared expert beside
// the routed ones), qwen3moe and gpt-oss (attention sinks, sliding windows, biases, clamped SwiGLU, YaRN).
enum class Arch { Llama, Qwen2, Qwen3, Qwen2Moe, Qwen3Moe, GptOss, Gemma2, Gemma3 };

// A dense FFN's gate activation: act(gate x) * (up x). Silu; Gelu is ggml's tanh form,
// 0.5 g (1 + tanh(sqrt(2 / pi) (g + 0.044715 g^3))) (gemma).
enum class Activation { Silu, Gelu };

// How rope pairs a head's values: llama rotates adjacent pairs (2i, 2i+1); qwen2/qwen3 (NeoX) rotate i with i + d/2.
enum class RopeMode { Adjacent, Neox };

// Rope scaling of the frequencies (kind None: plain rope). Llama3: each pair's frequency divided by the llama3 factor
// (from rope_freqs.weight when present, else computed from the parameters below); Linear: llama.cpp's
// `rope.scaling.factor` reading, every frequency divided by `factor`; Yarn: llama.cpp's ggml_rope_yarn, each pair's
// frequency blended from itself (extrapolation) and itself divided by `factor` (interpolation) by a ramp over the
// pairs between the correction dims of beta_fast and beta_slow rotations in original_context positions, and rope's
// cosine and sine scaled by Model::rope_attention_factor().
struct RopeScaling {
  enum class Kind { None, Llama3, Linear, Yarn } kind = Kind::None;
  float factor = 1.f;
  float low_freq_factor = 1.f;
  float high_freq_factor = 4.f;
  uint32_t original_context = 8192;
  float beta_fast = 32.f;  // YaRN: the rotations that end the ramp's extrapolated pairs
  float beta_slow = 1.f;   // YaRN: the rotations that start its interpolated pairs
};

// How a mixture's router turns its logits into the selected experts' weights (llama.cpp's gating functions).
// Softmax (qwen2moe, qwen3moe): a softmax over every expert, the k largest probabilities kept as the weights.
// SoftmaxTopK (gpt-oss): the k largest logits kept, a softmax over those k as the weights.
// Either selects the k largest with the lowest expert index first on ties, and lists them largest first.
enum class Gating { Softmax, SoftmaxTopK };

// One transformer block's tensors; optional ones are null when the checkpoint has none. A dense layer has w_gate, w_up
// and w_down; a mixture layer has the router and the experts instead, each expert's matrix the rows of a 3-D tensor
// [width, rows, experts] (expert e's rows are e * rows ... (e + 1) * rows - 1), and a 2-D bias [rows, experts] where
// the architecture has biases.
struct Layer {
  const gguf::TensorInfo* attn_norm = nullptr;
  const gguf::TensorInfo* wq = nullptr;
  const gguf::TensorInfo* wk = nullptr;
  const gguf::TensorInfo* wv = nullptr;
  const gguf::TensorInfo* wo = nullptr;
  const gguf::TensorInfo* bq = nullptr;  // qwen2's, qwen2moe's and gpt-oss's biases
  const gguf::TensorInfo* bk = nullptr;
  const gguf::TensorInfo* bv = nullptr;
  const gguf::TensorInfo* bo = nullptr;      // gpt-oss's output projection bias
  const gguf::TensorInfo* q_norm = nullptr;  // qwen3's and qwen3moe's per-head norms
  const gguf::TensorInfo* k_norm = nullptr;
  const gguf::TensorInfo* sinks = nullptr;  // gpt-oss's attention sinks: one logit per query head [heads]
  // The FFN's input norm: ffn_norm.weight, or gpt-oss's post_attention_norm.weight, which llama.cpp applies there.
  const gguf::TensorInfo* ffn_norm = nullptr;
  const gguf::TensorInfo* w_gate = nullptr;
  const gguf::TensorInfo* w_up = nullptr;
  const gguf::TensorInfo* w_down = nullptr;
  // A mixture's router: logits = router * x (+ router_bias) [d_model, experts].
  const gguf::TensorInfo* router = nullptr;
  const gguf::TensorInfo* router_bias = nullptr;     // gpt-oss [experts]
  const gguf::TensorInfo* gate_exps = nullptr;       // [d_model, expert_ffn, experts]
  const gguf::TensorInfo* up_exps = nullptr;         // [d_model, expert_ffn, experts]
  const gguf::TensorInfo* down_exps = nullptr;       // [expert_ffn, d_model, experts]
  const gguf::TensorInfo* gate_exps_bias = nullptr;  // gpt-oss [expert_ffn, experts]
  const gguf::TensorInfo* up_exps_bias = nullptr;    // gpt-oss [expert_ffn, experts]
  const gguf::TensorInfo* down_exps_bias = nullptr;  // gpt-oss [d_model, experts]
  // The shared expert (qwen2moe): a SwiGLU FFN every token runs, its output scaled by sigmoid(shared_gate_inp . x).
  const gguf::TensorInfo* shared_gate_inp = nullptr;  // [d_model]
  const gguf::TensorInfo* w_gate_shared = nullptr;    // [d_model, shared_ffn]
  const gguf::TensorInfo* w_up_shared = nullptr;      // [d_model, shared_ffn]
  const gguf::TensorInfo* w_down_shared = nullptr;    // [shared_ffn, d_model]
  bool sliding = false;  // the layer's queries see only the last Model::sliding_window positions
  // gemma2's and gemma3's sandwich norms: the attention's and the FFN's outputs normed (by these weights) before each
  // joins the residual.
  const gguf::TensorInfo* attn_post_norm = nullptr;
  const gguf::TensorInfo* ffn_post_norm = nullptr;

  // Every tensor the layer binds, null ones left out.
  std::vector<const gguf::TensorInfo*> tensors() const;
  // Whether `t` is one of the layer's expert tensors (a decode step reads experts_used of experts of its bytes).
  bool is_expert_tensor(const gguf::TensorInfo* t) const;
};

// A recognized decoder, dense or a mixture of experts: hyperparameters and the binding of every tensor.
struct Model {
  Arch arch = Arch::Llama;
  std::string architecture;  // the GGUF name: "llama", "qwen2", "qwen3", "qwen2moe", "qwen3moe", "gpt-oss"
  std::string name;          // general.name, or the architecture when absent
  uint32_t layers = 0;
  uint32_t d_model = 0;
  uint32_t heads = 0;
  uint32_t kv_heads = 0;
  uint32_t head_dim = 0;   // a key's (and query's) width
  uint32_t value_dim = 0;  // a value's width
  uint32_t ffn = 0;        // a dense FFN's width (a mixture's feed_forward_length, 0 when absent)
  uint32_t vocab = 0;
  uint32_t context = 0;  // the trained context length
  float rope_base = 10000.f;
  RopeMode rope_mode = RopeMode::Adjacent;
  RopeScaling scaling;
  float norm_eps = 1e-5f;
  bool tied_output = false;  // the output matrix is the token embedding
  bool qkv_bias = false;
  bool qk_norm = false;
  // gemma2/gemma3: the embedding rows times embed_scale (sqrt(d_model)) as they are gathered, the FFN's activation, and
  // the sliding layers' own rope (base rope_base_sliding, no scaling) where rope_base_sliding is not 0.
  float embed_scale = 1.f;
  Activation ffn_act = Activation::Silu;
  float rope_base_sliding = 0.f;
  bool post_norms = false;  // every layer has attn_post_norm and ffn_post_norm
  // Softcaps (0: none), as llama.cpp applies them: an attention logit s (the scaled q . k) becomes
  // attn_softcap tanh(s / attn_softcap) before the softmax (gemma2); a logit z of the output final_softcap
  // tanh(z / final_softcap) (gemma2; gemma3 where its checkpoint names one).
  float attn_softcap = 0.f;
  float final_softcap = 0.f;

  // Mixture of experts (experts 0: dense): each token runs experts_used of the experts, picked by the router.
  uint32_t experts = 0;
  uint32_t experts_used = 0;
  uint32_t expert_ffn = 0;  // an expert's FFN width
  uint32_t shared_ffn = 0;  // the shared expert's FFN width (0: none)
  Gating gating = Gating::Softmax;
  bool norm_expert_weights = false;  // the selected experts' weights divided by their sum (qwen3moe)
  // The experts' activation: SwiGLU silu(gate) * up when swiglu_limit is 0; else gpt-oss's clamped SwiGLU:
  // g = min(gate, limit), u = clamp(up, -limit, limit), out = g * sigmoid(swiglu_alpha * g) * (u + 1).
  float swiglu_limit = 0.f;
  float swiglu_alpha = 1.f;
  // Sliding-window attention on the layers marked `sliding` (gpt-oss: the even ones): a query at position p sees the
  // keys at positions p - sliding_window + 1 ... p (0: no sliding layers).
  uint32_t sliding_window = 0;

  const gguf::TensorInfo* token_embd = nullptr;
  const gguf::TensorInfo* output_norm = nullptr;
  const gguf::TensorInfo* output = nullptr;  // == token_embd when tied
  // llama's rope frequency factors (llama3 scaling as llama.cpp's converter stores it), null when absent; when present
  // they override the scaling keys: each pair's inverse frequency is divided by its factor.
  const gguf::TensorInfo* rope_freqs = nullptr;
  std::vector<float> rope_freq_factors;  // rope_freqs' values (head_dim/2), empty when absent
  std::vector<Layer> layer;

  uint32_t group() const { return heads / kv_heads; }  // query heads a key/value head serves
  // The attention's scale 1/sqrt(attention_width()): head_dim, or the gemma 27Bs' d_model / heads (as llama.cpp).
  float attention_scale() const;
  uint32_t attention_width() const;
  bool has_experts() const { return experts > 0; }
  // Rope's inverse frequencies for the head's head_dim/2 pairs, scaling applied as llama.cpp applies it; with
  // `sliding` those of the sliding layers (the same unless rope_base_sliding is set).
  std::vector<double> rope_inv_freq(bool sliding = false) const;
  // Whether the sliding layers rope by frequencies of their own (rope_base_sliding).
  bool sliding_rope() const { return rope_base_sliding != 0.f; }
  // What rope's cosine and sine are multiplied by (so every attention logit by its square): YaRN's attention factor
  // (mscale) 1 + 0.1 ln(factor), as ggml's rope_yarn applies it; 1 without YaRN.
  double rope_attention_factor() const;
  // Bytes of every weight tensor, and of those a decode step reads (the embedding only for one row; of each expert
  // tensor, experts_used of experts: the active experts' rows).
  uint64_t weight_bytes() const;
  uint64_t decode_bytes() const;
};

// Recognizes `file`; throws lt::Error naming an unsupported architecture, a missing or impossible key (experts_used
// past experts, ...), a missing tensor, a tensor of the wrong shape or type, or a tensor the architecture does not use
// (llama.cpp refuses those too). The model points
// into `file`'s tensor infos: keep the file alive while it is used.
Model recognize(const gguf::File& file);

const char* to_string(Arch a);
// The architecture named `name` (general.architecture), or an lt::Error naming it and those supported.
Arch arch_of(const std::string& name);
// Whether architecture `a` routes tokens to experts (qwen2moe, qwen3moe, gpt-oss).
bool is_mixture(Arch a);

}  // namespace lt::model
