// Synthesized checkpoints: random weights at real models' shapes, with the metadata llama.cpp writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ggml_types.hpp"
#include "compiler/gguf.hpp"

namespace lt::synth {

// A model shape lane-tune can synthesize: its name, the GGUF architecture, and its hyperparameters.
struct Preset {
  std::string name;          // "qwen3-0.6b"
  std::string architecture;  // "qwen3", "llama", "qwen2", "gemma2", "gemma3", "qwen2moe", "qwen3moe", "gpt-oss"
  uint32_t layers = 0;
  uint32_t d_model = 0;
  uint32_t heads = 0;
  uint32_t kv_heads = 0;
  uint32_t head_dim = 0;
  uint32_t ffn = 0;
  uint32_t vocab = 0;
  uint32_t context = 0;
  float rope_base = 10000.f;
  float norm_eps = 1e-6f;
  bool tied_output = false;
  bool qkv_bias = false;
  bool qk_norm = false;
  // llama3-style rope scaling (factor 0: none).
  float rope_scale_factor = 0.f, rope_low_freq = 1.f, rope_high_freq = 4.f;
  uint32_t rope_original_context = 8192;
  // Mixture of experts (experts 0: dense), and its shared expert's width (0: none; qwen2moe has one).
  uint32_t experts = 0, experts_used = 0, expert_ffn = 0, shared_ffn = 0;
  // Sliding-window attention on alternate layers (gpt-oss; 0: none); the gemmas: on all but every sliding_pattern-th
  // layer (`attention.sliding_window_pattern`, written where not 0; llama.cpp reads 2 for gemma2, 6 for gemma3 when it
  // is absent).
  uint32_t sliding_window = 0;
  uint32_t sliding_pattern = 0;
  // The gemmas' softcaps (`attn_logit_softcapping`: gemma2's; `final_logit_softcapping`), written where not 0.
  float attn_softcap = 0.f, final_softcap = 0.f;
};

// Every preset, tiny ones for tests first.
const std::vector<Preset>& presets();
// The preset named `name`; throws lt::Error naming the known presets when there is none.
const Preset& preset(const std::string& name);

// A shape from JSON text (one flat object of Preset's fields by name: {"architecture": "qwen2", "layers": 2, "d_model":
// 896, ...}), the fields it names set over `base` (a preset, or an empty shape); throws lt::Error for text that is not
// such an object, an unknown field or a value of the wrong kind. What it cannot hold (heads not a multiple of kv_heads,
// say) is write's to refuse.
Preset parse_shape(std::string_view text, const Preset& base = {});

// How a checkpoint's type lays its matrices out.
enum class Layout {
  Pure,   // every matrix in the type, as llama.cpp's `quantize --pure` (a row the blocks do not fit falls back)
  Llama,  // as llama.cpp's quantize tool writes the type's file type: the output (or a tied embedding) in q6_k, some
          // attn_v, attn_k, attn_output and ffn_down in more bits, an mxfp4 file's dense matrices in q8_0 (mix.hpp's
          // llama_type has the rules). The commands' default.
};

// What to synthesize: the preset, the matrices' type (norms and 1-D tensors stay f32), and the seed.
struct Options {
  std::string preset;
  // A shape of the caller's own in place of the named preset (its name then only names it in messages); checked as
  // recognize would read it: heads a multiple of the key/value heads, widths and counts nonzero.
  std::optional<Preset> shape;
  ggml::Type type = ggml::Type::Q8_0;
  // llama.cpp's "_M" mix of a K-quant type (q4_k_m, q5_k_m): the output (or a tied embedding), and attn_v and
  // ffn_down of the layers use_more_bits picks (the first and last eighth, every third between), in q6_k. A mix is
  // laid out as llama.cpp does whatever `layout` says.
  bool mixed = false;
  Layout layout = Layout::Pure;
  uint64_t seed = 1;
  // The preset's first `layers` layers only (0: all of them): a big model's shapes at a size that trains or fits.
  uint32_t layers = 0;
  // Called after each tensor with bytes written so far and the total (progress), may be empty.
  std::function<void(uint64_t, uint64_t)> progress;
};

// Writes the checkpoint to `out`, streamed; deterministic in (preset, type, mixed, layout, seed). Returns the file's
// size.
uint64_t write(const Options& options, const std::filesystem::path& out);

// One tensor a preset's checkpoint holds: its llama.cpp name, dims in ggml order, and stored type.
struct TensorPlan {
  std::string name;
  std::vector<uint64_t> dims;
  ggml::Type type = ggml::Type::F32;
};

// The tensors `write` produces for `options`, in file order (a matrix whose rows do not fit a K-quant's 256-element
// blocks falls back as llama.cpp's quantizer does: q4_k to q5_0, q5_k to q5_1, q6_k to q8_0, q2_k and q3_k to q4_0,
// iq4_xs to iq4_nl).
std::vector<TensorPlan> plan(const Options& options);

// A matrix type as the commands name it: a ggml type's name, or q4_k_m / q5_k_m (the K-quant in llama.cpp's "_M" mix).
struct MatrixType {
  ggml::Type type = ggml::Type::Q8_0;
  bool mixed = false;
  Layout layout = Layout::Pure;  // (parse_matrix_type leaves it: the caller's choice)
};
std::optional<MatrixType> parse_matrix_type(std::string_view name);
// The names parse_matrix_type takes, for messages.
extern const char* const kMatrixTypeNames;

// What `quantize` writes: the matrices' type (as Options::type, mixed and layout), and progress as in Options.
struct QuantizeOptions {
  MatrixType type;
  std::function<void(uint64_t, uint64_t)> progress;
};

// Writes checkpoint `in` to `out` with its matrices requantized as llama.cpp's quantize tool lays the type out (as
// `plan` does for a preset: the "_M" mix's Q6_K tensors, the 32-element fallbacks where rows are not whole 256-blocks),
// each from its values dequantized to f32; a tensor already in its type, and every vector, the expert router and
// the rope factors, copied byte for byte. The metadata is `in`'s, general.file_type the new one. Deterministic;
// streamed a slab of rows at a time. Returns the file's size; throws lt::Error for a type that cannot be written.
uint64_t quantize(const gguf::File& in, const std::filesystem::path& out, const QuantizeOptions& options);

}  // namespace lt::synth
