// Synthesized checkpoints: a preset's tensors in llama.cpp's names and shapes, filled with seeded random weights,
// quantized (with the quick K-quant fits: random weights need speed, not accuracy) and streamed to disk a slab of
// rows at a time.
#include <algorithm>
#include <cmath>
#include <exception>
#include <numbers>
#include <thread>

#include "../gguf/ggml_blocks.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "mix.hpp"

namespace lt::synth {
namespace {

using namespace detail;

using ggml::Type;
using gguf::Value;

// How a tensor's values are drawn.
enum class Fill { Matrix, Norm, Bias, Sink, RopeFactors };

// A tensor to write and how to fill it.
struct Planned {
  TensorPlan plan;
  Fill fill = Fill::Matrix;
};

uint64_t rows_of(const std::vector<uint64_t>& dims) {
  uint64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

// The tensor list of `p`, in file order, with each matrix's type chosen from `matrix_type` as `o` lays it out
// (Options::mixed and Options::layout).
std::vector<Planned> plan_tensors(const Preset& p, Type matrix_type, const Options& o) {
  std::vector<Planned> out;
  const MixModel mm = MixModel::of(p.architecture, p.layers, p.heads, p.kv_heads, p.experts, p.tied_output);
  auto matrix = [&](std::string name, std::vector<uint64_t> dims, bool keep_f32 = false) {
    const Type t = keep_f32 ? Type::F32
                   : o.mixed || o.layout == Layout::Llama
                       ? llama_type(name, dims[0], dims.size() == 3, matrix_type, o.mixed, mm)
                       : fit_rows(matrix_type, dims[0]);
    out.push_back({{std::move(name), std::move(dims), t}, Fill::Matrix});
  };
  auto vec = [&](std::string name, std::vector<uint64_t> dims, Fill fill) {
    out.push_back({{std::move(name), std::move(dims), Type::F32}, fill});
  };
  const uint64_t d = p.d_model, q_width = uint64_t{p.heads} * p.head_dim, kv_width = uint64_t{p.kv_heads} * p.head_dim;
  const bool gpt_oss = p.architecture == "gpt-oss", gemma = p.architecture == "gemma2" || p.architecture == "gemma3";
  matrix("token_embd.weight", {d, p.vocab});
  if (p.architecture == "llama" && p.rope_scale_factor > 0)
    vec("rope_freqs.weight", {p.head_dim / 2}, Fill::RopeFactors);
  for (uint32_t l = 0; l < p.layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    vec(b + "attn_norm.weight", {d}, Fill::Norm);
    matrix(b + "attn_q.weight", {d, q_width});
    if (p.qkv_bias) vec(b + "attn_q.bias", {q_width}, Fill::Bias);
    matrix(b + "attn_k.weight", {d, kv_width});
    if (p.qkv_bias) vec(b + "attn_k.bias", {kv_width}, Fill::Bias);
    matrix(b + "attn_v.weight", {d, kv_width});
    if (p.qkv_bias) vec(b + "attn_v.bias", {kv_width}, Fill::Bias);
    if (p.qk_norm) {
      vec(b + "attn_q_norm.weight", {p.head_dim}, Fill::Norm);
      vec(b + "attn_k_norm.weight", {p.head_dim}, Fill::Norm);
    }
    matrix(b + "attn_output.weight", {q_width, d});
    if (gemma) vec(b + "post_attention_norm.weight", {d}, Fill::Norm);
    if (gpt_oss) {
      vec(b + "attn_output.bias", {d}, Fill::Bias);
      vec(b + "attn_sinks.weight", {p.heads}, Fill::Sink);
      vec(b + "post_attention_norm.weight", {d}, Fill::Norm);
    } else {
      vec(b + "ffn_norm.weight", {d}, Fill::Norm);
    }
    if (p.experts == 0) {
      matrix(b + "ffn_gate.weight", {d, p.ffn});
      matrix(b + "ffn_up.weight", {d, p.ffn});
      matrix(b + "ffn_down.weight", {p.ffn, d});
      if (gemma) vec(b + "post_ffw_norm.weight", {d}, Fill::Norm);
    } else {
      const uint64_t e = p.experts, f = p.expert_ffn;
      matrix(b + "ffn_gate_inp.weight", {d, e}, true);
      if (gpt_oss) vec(b + "ffn_gate_inp.bias", {e}, Fill::Bias);
      matrix(b + "ffn_gate_exps.weight", {d, f, e});
      if (gpt_oss) vec(b + "ffn_gate_exps.bias", {f, e}, Fill::Bias);
      matrix(b + "ffn_up_exps.weight", {d, f, e});
      if (gpt_oss) vec(b + "ffn_up_exps.bias", {f, e}, Fill::Bias);
      matrix(b + "ffn_down_exps.weight", {f, d, e});
      if (gpt_oss) vec(b + "ffn_down_exps.bias", {d, e}, Fill::Bias);
      if (p.shared_ffn > 0) {
        // qwen2moe's shared expert and its gate (a row of weights, f32 as llama.cpp's converter keeps it).
        const uint64_t s = p.shared_ffn;
        vec(b + "ffn_gate_inp_shexp.weight", {d}, Fill::Matrix);
        matrix(b + "ffn_gate_shexp.weight", {d, s});
        matrix(b + "ffn_up_shexp.weight", {d, s});
        matrix(b + "ffn_down_shexp.weight", {s, d});
      }
    }
  }
  vec("output_norm.weight", {d}, Fill::Norm);
  if (!p.tied_output) matrix("output.weight", {d, p.vocab});
  return out;
}

// The metadata llama.cpp's converter writes for `p`'s architecture.
void set_metadata(gguf::Writer& w, const Preset& p, Type type, bool mixed) {
  const std::string& a = p.architecture;
  w.set("general.architecture", Value::str(a));
  w.set("general.name", Value::str("lane-tune synth " + p.name));
  w.set("general.alignment", Value::u32(32));
  w.set("general.file_type", Value::u32(file_type(type, mixed)));
  w.set("general.quantization_version", Value::u32(2));
  w.set(a + ".vocab_size", Value::u32(p.vocab));
  w.set(a + ".context_length", Value::u32(p.context));
  w.set(a + ".embedding_length", Value::u32(p.d_model));
  w.set(a + ".block_count", Value::u32(p.layers));
  w.set(a + ".feed_forward_length", Value::u32(p.ffn));
  w.set(a + ".attention.head_count", Value::u32(p.heads));
  w.set(a + ".attention.head_count_kv", Value::u32(p.kv_heads));
  w.set(a + ".attention.key_length", Value::u32(p.head_dim));
  w.set(a + ".attention.value_length", Value::u32(p.head_dim));
  w.set(a + ".attention.layer_norm_rms_epsilon", Value::f32(p.norm_eps));
  w.set(a + ".rope.freq_base", Value::f32(p.rope_base));
  if (a == "llama") w.set(a + ".rope.dimension_count", Value::u32(p.head_dim));
  if (p.experts > 0) {
    w.set(a + ".expert_count", Value::u32(p.experts));
    w.set(a + ".expert_used_count", Value::u32(p.experts_used));
    w.set(a + ".expert_feed_forward_length", Value::u32(p.expert_ffn));
    if (p.shared_ffn > 0) w.set(a + ".expert_shared_feed_forward_length", Value::u32(p.shared_ffn));
  }
  if (p.sliding_window > 0) w.set(a + ".attention.sliding_window", Value::u32(p.sliding_window));
  if (p.sliding_pattern > 0) w.set(a + ".attention.sliding_window_pattern", Value::u32(p.sliding_pattern));
  if (p.attn_softcap > 0) w.set(a + ".attn_logit_softcapping", Value::f32(p.attn_softcap));
  if (p.final_softcap > 0) w.set(a + ".final_logit_softcapping", Value::f32(p.final_softcap));
  if ((a == "gemma2" || a == "gemma3") && p.rope_scale_factor > 0) {
    // (linear scaling, as the converter writes it: gemma3's global layers', every layer's in gemma2)
    w.set(a + ".rope.scaling.type", Value::str("linear"));
    w.set(a + ".rope.scaling.factor", Value::f32(p.rope_scale_factor));
  }
  if (a == "gpt-oss" && p.rope_scale_factor > 0) {
    w.set(a + ".rope.scaling.type", Value::str("yarn"));
    w.set(a + ".rope.scaling.factor", Value::f32(p.rope_scale_factor));
    w.set(a + ".rope.scaling.original_context_length", Value::u32(p.rope_original_context));
  }
  if (a == "llama" && p.rope_scale_factor > 0) {
    // llama.cpp applies llama3 scaling through the rope_freqs tensor; `rope.scaling.factor` would make it scale
    // linearly on top, so the llama3 parameters are recorded under lane-tune's own keys.
    w.set("lane_tune.rope.scaling.type", Value::str("llama3"));
    w.set("lane_tune.rope.scaling.factor", Value::f32(p.rope_scale_factor));
    w.set("lane_tune.rope.scaling.low_freq_factor", Value::f32(p.rope_low_freq));
    w.set("lane_tune.rope.scaling.high_freq_factor", Value::f32(p.rope_high_freq));
    w.set("lane_tune.rope.scaling.original_context_length", Value::u32(p.rope_original_context));
  }
  w.set("tokenizer.ggml.model", Value::str("none"));
}

// A splitmix64 step: the seed mixer and the row generator's state advance.
uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t hash_name(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Fills `row` with uniform values in [-amp, amp] plus `center`, from a generator seeded by (tensor, row).
void random_row(uint64_t tensor_seed, uint64_t row_index, float center, float amp, std::span<float> row) {
  uint64_t s = tensor_seed ^ (row_index * 0xd1b54a32d192ed03ull);
  splitmix(s);
  constexpr float kUnit = 1.f / 16777216.f;
  size_t i = 0;
  for (; i + 1 < row.size(); i += 2) {
    const uint64_t r = splitmix(s);
    row[i] = center + amp * (2.f * static_cast<float>(r >> 40) * kUnit - 1.f);
    row[i + 1] = center + amp * (2.f * static_cast<float>((r >> 16) & 0xffffff) * kUnit - 1.f);
  }
  if (i < row.size()) row[i] = center + amp * (2.f * static_cast<float>(splitmix(s) >> 40) * kUnit - 1.f);
}

// llama.cpp's llama3 rope factors: 1 for short wavelengths, the scale factor for long ones, smoothed between.
std::vector<float> llama3_rope_factors(const Preset& p) {
  std::vector<float> out;
  const double low_wavelen = p.rope_original_context / p.rope_low_freq;
  const double high_wavelen = p.rope_original_context / p.rope_high_freq;
  for (uint32_t i = 0; i < p.head_dim; i += 2) {
    const double freq = 1.0 / std::pow(double(p.rope_base), double(i) / p.head_dim);
    const double wavelen = 2 * std::numbers::pi / freq;
    if (wavelen < high_wavelen) {
      out.push_back(1.f);
    } else if (wavelen > low_wavelen) {
      out.push_back(p.rope_scale_factor);
    } else {
      const double smooth =
          (p.rope_original_context / wavelen - p.rope_low_freq) / (p.rope_high_freq - p.rope_low_freq);
      out.push_back(static_cast<float>(1.0 / ((1 - smooth) / p.rope_scale_factor + smooth)));
    }
  }
  return out;
}

// Generates and quantizes rows [first, last) of a tensor into `out`.
void make_rows(const Planned& t, uint64_t tensor_seed, uint64_t first, uint64_t last, uint8_t* out) {
  const uint64_t width = t.plan.dims[0];
  const uint64_t row_bytes = ggml::row_bytes(t.plan.type, width);
  float center = 0, amp = 0;
  switch (t.fill) {
    case Fill::Matrix:
      amp = std::sqrt(3.f / static_cast<float>(width));
      break;
    case Fill::Norm:
      center = 1.f, amp = 0.1f;
      break;
    case Fill::Bias:
      amp = 0.05f;
      break;
    case Fill::Sink:
      amp = 1.f;
      break;
    case Fill::RopeFactors:
      break;
  }
  const auto tr = ggml::traits_of(t.plan.type);
  const auto fast = tr.block_elems > 1 ? ggml::detail::block_quantizer_fast(t.plan.type) : nullptr;
  std::vector<float> row(width);
  for (uint64_t r = first; r < last; ++r) {
    random_row(tensor_seed, r, center, amp, row);
    uint8_t* dst = out + (r - first) * row_bytes;
    if (!fast) {
      ggml::quantize(t.plan.type, row, dst);
      continue;
    }
    for (uint64_t b = 0; b < width / tr.block_elems; ++b)
      fast(row.data() + b * tr.block_elems, dst + b * tr.block_bytes);
  }
}

// A shape of the caller's own, checked before anything is written.
void check_shape(const Preset& p) {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw Error("synth shape " + p.name + ": " + what);
  };
  const model::Arch arch = model::arch_of(p.architecture);
  need(p.layers && p.d_model && p.heads && p.kv_heads && p.head_dim && p.ffn && p.vocab && p.context,
       "layers, d_model, heads, kv_heads, head_dim, ffn, vocab and context must be nonzero");
  need(p.heads % p.kv_heads == 0, "heads must be a multiple of kv_heads");
  need(p.layers <= 4096 && p.heads <= 1024 && p.head_dim <= 1024 && p.experts <= 1024 && p.experts_used <= 64,
       "at most 4096 layers, 1024 heads, heads 1024 wide, 1024 experts and 64 of them used");
  need(p.d_model <= (1u << 17) && p.ffn <= (1u << 18) && p.expert_ffn <= (1u << 18) && p.shared_ffn <= (1u << 18) &&
           p.vocab <= (1u << 22) && p.context <= (1u << 24) && p.sliding_window <= (1u << 24),
       "at most d_model 131072, ffn widths 262144, a vocabulary of 4194304 and 16777216 positions");
  need(p.d_model % 32 == 0 && p.ffn % 32 == 0 && uint64_t(p.heads) * p.head_dim % 32 == 0,
       "d_model, ffn and heads x head_dim (the rows the projections read) must be multiples of 32, a quantized "
       "row's block");
  need(p.head_dim % 2 == 0, "head_dim must be even (rope turns pairs)");
  need((p.experts != 0) == model::is_mixture(arch),
       "experts are a mixture's (qwen2moe, qwen3moe, gpt-oss) and every mixture has them");
  need(!(arch == model::Arch::GptOss && p.tied_output), "gpt-oss ties no output matrix to its embedding");
  const bool gemma = arch == model::Arch::Gemma2 || arch == model::Arch::Gemma3;
  need(arch != model::Arch::Gemma3 || (p.qk_norm && !p.qkv_bias), "gemma3 has q/k norms and no q/k/v biases");
  need(arch != model::Arch::Gemma2 || (!p.qk_norm && !p.qkv_bias && p.tied_output),
       "gemma2 has no q/k norms, no q/k/v biases and its output tied to its embedding");
  need(arch != model::Arch::Gemma2 || p.sliding_window > 0,
       "gemma2's layers slide (llama.cpp reads a window of 4096 when none is written)");
  need(p.sliding_pattern == 0 || gemma, "sliding_pattern is the gemmas'");
  need(p.attn_softcap == 0 || arch == model::Arch::Gemma2, "attn_softcap is gemma2's");
  need(p.final_softcap == 0 || gemma, "final_softcap is the gemmas'");
  need(arch != model::Arch::Gemma2 || (p.attn_softcap > 0 && p.final_softcap > 0),
       "gemma2 softcaps its attention and output logits (llama.cpp reads 50 and 30 when none is written)");
  need(p.attn_softcap >= 0 && p.final_softcap >= 0, "softcaps are positive (0: none)");
  need(p.experts == 0 || (p.experts_used && p.experts_used <= p.experts && p.expert_ffn % 32 == 0 && p.expert_ffn),
       "a mixture needs 1 to experts used experts and an expert_ffn a multiple of 32");
}

// The preset `options` names (or its own shape), with its layers cut to options.layers where that is set.
Preset shape_of(const Options& options) {
  Preset p = options.shape ? *options.shape : preset(options.preset);
  if (options.shape) check_shape(p);
  if (options.layers > p.layers)
    throw Error("synth --layers " + std::to_string(options.layers) + ": " + p.name + " has " +
                std::to_string(p.layers) + " layers (--layers keeps its first N)");
  if (options.layers) p.layers = options.layers;
  return p;
}

}  // namespace

std::vector<TensorPlan> plan(const Options& options) {
  std::vector<TensorPlan> out;
  for (auto& t : plan_tensors(shape_of(options), options.type, options)) out.push_back(std::move(t.plan));
  return out;
}

uint64_t write(const Options& options, const std::filesystem::path& out) {
  const Preset p = shape_of(options);
  const auto tr = ggml::traits_of(options.type);
  if (!tr.quantizable) throw Error("synth cannot write " + std::string(tr.name) + " matrices");
  if (options.mixed && options.type != Type::Q4_K && options.type != Type::Q5_K)
    throw Error("synth mixes only q4_k and q5_k (q4_k_m, q5_k_m), not " + std::string(tr.name));
  const std::vector<Planned> tensors = plan_tensors(p, options.type, options);

  gguf::Writer w(out, 32);
  set_metadata(w, p, options.type, options.mixed);
  uint64_t total = 0;
  for (const auto& t : tensors) {
    w.add_tensor(t.plan.name, t.plan.dims, t.plan.type);
    total += ggml::row_bytes(t.plan.type, t.plan.dims[0]) * rows_of(t.plan.dims);
  }
  w.begin_data();

  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  constexpr uint64_t kSlabBytes = 8ull << 20;
  // Two slabs: one being written to disk by `writing` while the next is generated into the other.
  std::vector<uint8_t> slabs[2];
  int current = 0;
  std::jthread writing;
  std::exception_ptr write_error;
  auto wait_for_write = [&] {
    if (writing.joinable()) writing.join();
    if (write_error) std::rethrow_exception(write_error);
  };
  auto write_async = [&](std::span<const uint8_t> bytes) {
    wait_for_write();
    writing = std::jthread([&w, &write_error, bytes] {
      try {
        w.write(bytes);
      } catch (...) {
        write_error = std::current_exception();
      }
    });
  };
  uint64_t written = 0;
  try {
    for (const auto& t : tensors) {
      uint64_t s = options.seed ^ hash_name(t.plan.name);
      const uint64_t tensor_seed = splitmix(s);
      const uint64_t width = t.plan.dims[0];
      const uint64_t rows = rows_of(t.plan.dims);
      const uint64_t row_bytes = ggml::row_bytes(t.plan.type, width);
      if (t.fill == Fill::RopeFactors) {
        const auto f = llama3_rope_factors(p);
        wait_for_write();
        w.write({reinterpret_cast<const uint8_t*>(f.data()), f.size() * 4});
        written += f.size() * 4;
        if (options.progress) options.progress(written, total);
        continue;
      }
      const uint64_t slab_rows = std::max<uint64_t>(1, kSlabBytes / row_bytes);
      for (uint64_t first = 0; first < rows; first += slab_rows) {
        const uint64_t last = std::min(rows, first + slab_rows);
        const uint64_t n = last - first;
        std::vector<uint8_t>& slab = slabs[current];
        current ^= 1;
        if (slab.size() < n * row_bytes) slab.resize(n * row_bytes);
        const unsigned parts = static_cast<unsigned>(std::min<uint64_t>(threads, (n + 15) / 16));
        if (parts <= 1) {
          make_rows(t, tensor_seed, first, last, slab.data());
        } else {
          std::vector<std::jthread> pool;
          for (unsigned i = 0; i < parts; ++i) {
            const uint64_t a = first + n * i / parts, b = first + n * (i + 1) / parts;
            pool.emplace_back([&, a, b] { make_rows(t, tensor_seed, a, b, slab.data() + (a - first) * row_bytes); });
          }
        }
        write_async({slab.data(), n * row_bytes});
        written += n * row_bytes;
      }
      if (options.progress) options.progress(written, total);
    }
    wait_for_write();
  } catch (...) {
    if (writing.joinable()) writing.join();
    throw;
  }
  w.finish();
  return std::filesystem::file_size(out);
}

}  // namespace lt::synth
