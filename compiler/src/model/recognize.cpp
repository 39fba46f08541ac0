// Model recognition: llama.cpp's reading of a llama, qwen2, qwen3, gemma2, gemma3, qwen2moe, qwen3moe or gpt-oss
// checkpoint's metadata and tensor names.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>

#include "compiler/error.hpp"
#include "compiler/model.hpp"

namespace lt::model {
namespace {

// The metadata and tensors of one checkpoint, read with the architecture's key prefix; records every tensor bound.
class Reader {
 public:
  Reader(const gguf::File& file, std::string arch) : file_(file), arch_(std::move(arch)) {}

  std::string key(const std::string& k) const { return arch_ + "." + k; }
  const gguf::Value* find(const std::string& k) const { return file_.find(key(k)); }

  // A required unsigned hyperparameter `<arch>.key`.
  uint32_t need_uint(const std::string& key) const {
    const gguf::Value* v = find(key);
    if (!v) throw Error("checkpoint has no " + arch_ + "." + key + " (llama.cpp requires it)");
    return to_uint(key, *v);
  }

  // An optional unsigned hyperparameter; a per-layer array is accepted when all its entries are equal.
  uint32_t opt_uint(const std::string& key, uint32_t fallback) const {
    const gguf::Value* v = find(key);
    return v ? to_uint(key, *v) : fallback;
  }

  float opt_float(const std::string& key, float fallback) const {
    const gguf::Value* v = find(key);
    if (!v) return fallback;
    try {
      return static_cast<float>(v->as_float());
    } catch (const Error&) {
      throw Error(arch_ + "." + key + " is not a number");
    }
  }

  bool opt_bool(const std::string& key, bool fallback) const {
    const gguf::Value* v = find(key);
    if (!v) return fallback;
    try {
      return v->as_bool();
    } catch (const Error&) {
      throw Error(arch_ + "." + key + " is not a bool");
    }
  }

  // A tensor by name, checked for shape (trailing 1s aside, as ggml reads shapes) and type; null when absent and
  // `required` is false. A matrix may be of any type lane-tune dequantizes; anything else must be f32.
  const gguf::TensorInfo* bind(const std::string& name, std::vector<uint64_t> dims, bool required, bool matrix) {
    const gguf::TensorInfo* t = file_.tensor(name);
    if (!t) {
      if (required) throw Error("checkpoint has no tensor " + name + " (required by " + arch_ + ")");
      return nullptr;
    }
    if (squeezed(t->dims) != squeezed(dims))
      throw Error("tensor " + name + " has shape " + shape(t->dims) + ", expected " + shape(dims));
    auto traits = ggml::traits(static_cast<uint32_t>(t->type));
    std::string type_name = traits ? std::string(traits->name) : std::to_string(static_cast<uint32_t>(t->type));
    if (matrix) {
      if (!traits || !traits->dequantizable)
        throw Error("tensor " + name + " has type " + type_name + ", which lane-tune cannot read");
      if (dims[0] % traits->block_elems != 0)
        throw Error("tensor " + name + " has rows of " + std::to_string(dims[0]) + " elements, not a whole number of " +
                    type_name + " blocks");
    } else if (t->type != ggml::Type::F32) {
      throw Error("tensor " + name + " has type " + type_name + ", expected f32 (a 1-D tensor)");
    }
    bound_.insert(name);
    return t;
  }

  // Throws naming the first tensor nothing bound (llama.cpp refuses a checkpoint with tensors it does not use).
  void check_all_bound() const {
    for (const auto& t : file_.tensors())
      if (!bound_.count(t.name)) throw Error("unexpected tensor " + t.name + " for architecture " + arch_);
  }

 private:
  uint32_t to_uint(const std::string& key, const gguf::Value& v) const {
    if (v.type != gguf::ValueType::Array) return checked(key, read_uint(key, v));
    const auto& items = v.as_array().items;
    if (items.empty()) throw Error(arch_ + "." + key + " is an empty array");
    uint64_t first = read_uint(key, items[0]);
    for (const auto& i : items)
      if (read_uint(key, i) != first)
        throw Error(arch_ + "." + key + " differs between layers, which lane-tune does not support");
    return checked(key, first);
  }

  uint64_t read_uint(const std::string& key, const gguf::Value& v) const {
    try {
      return v.as_uint();
    } catch (const Error&) {
      throw Error(arch_ + "." + key + " is not an unsigned integer");
    }
  }

  uint32_t checked(const std::string& key, uint64_t x) const {
    if (x > UINT32_MAX) throw Error(arch_ + "." + key + " is out of range: " + std::to_string(x));
    return static_cast<uint32_t>(x);
  }

  static std::vector<uint64_t> squeezed(std::vector<uint64_t> dims) {
    while (dims.size() > 1 && dims.back() == 1) dims.pop_back();
    return dims;
  }

  static std::string shape(const std::vector<uint64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
  }

  const gguf::File& file_;
  std::string arch_;
  std::set<std::string> bound_;
};

// Reads rope scaling: lane-tune's own `lane_tune.rope.scaling.*` keys (llama3 parameters that llama.cpp would not
// misread), then `<arch>.rope.scaling.*` as llama.cpp reads them (a factor without a type is linear scaling) plus
// types "llama3" and "yarn" (its original context defaults to the trained one, `context`); a rope_freqs tensor alone
// means llama3. Other kinds are refused.
RopeScaling read_scaling(const gguf::File& file, const Reader& r, bool has_freq_tensor, uint32_t context) {
  RopeScaling s;
  auto number = [&](const std::string& key, float fallback) {
    const gguf::Value* v = file.find(key);
    if (!v) return fallback;
    try {
      return static_cast<float>(v->as_float());
    } catch (const Error&) {
      throw Error(key + " is not a number");
    }
  };
  auto text = [&](const std::string& key) {
    const gguf::Value* v = file.find(key);
    if (!v) return std::string();
    if (v->type != gguf::ValueType::String) throw Error(key + " is not a string");
    return v->as_string();
  };
  auto llama3 = [&](const std::string& prefix) {
    s.kind = RopeScaling::Kind::Llama3;
    s.factor = number(prefix + "factor", s.factor);
    s.low_freq_factor = number(prefix + "low_freq_factor", s.low_freq_factor);
    s.high_freq_factor = number(prefix + "high_freq_factor", s.high_freq_factor);
    s.original_context = static_cast<uint32_t>(number(prefix + "original_context_length", float(s.original_context)));
    if (!has_freq_tensor && (s.low_freq_factor == s.high_freq_factor || !(s.factor > 0.f)))
      throw Error(prefix + "*: llama3 rope scaling needs a positive factor and low_freq_factor != high_freq_factor");
    return s;
  };
  std::string own = text("lane_tune.rope.scaling.type");
  if (own == "llama3") return llama3("lane_tune.rope.scaling.");
  if (!own.empty() && own != "none")
    throw Error("unsupported rope scaling '" + own + "' (lane_tune.rope.scaling.type)");

  const std::string prefix = r.key("rope.scaling.");
  std::string type = text(prefix + "type");
  if (type == "llama3") return llama3(prefix);
  float factor = number(prefix + "factor", 0.f);
  if (type == "yarn") {
    // llama.cpp: freq_scale = 1/factor, ext_factor 1 (a context's default under YaRN), attn_factor 1, and
    // the correction range of beta_fast ... beta_slow rotations in the original context.
    if (!(factor > 0.f) || !std::isfinite(factor)) throw Error(prefix + "factor is not positive (yarn rope scaling)");
    s.kind = RopeScaling::Kind::Yarn;
    s.factor = factor;
    s.original_context = static_cast<uint32_t>(number(prefix + "original_context_length", float(context)));
    s.beta_fast = number(prefix + "yarn_beta_fast", s.beta_fast);
    s.beta_slow = number(prefix + "yarn_beta_slow", s.beta_slow);
    if (s.original_context == 0 || !(s.beta_fast > 0.f) || !(s.beta_slow > 0.f))
      throw Error(prefix + "*: yarn rope scaling needs a positive original context, yarn_beta_fast and yarn_beta_slow");
    if (number(prefix + "yarn_log_multiplier", 0.f) != 0.f)
      throw Error(prefix + "yarn_log_multiplier is not supported (lane-tune reads yarn as gpt-oss has it)");
    return s;
  }
  if (type.empty() || type == "linear") {
    if (factor != 0.f && factor != 1.f) {
      if (!(factor > 0.f)) throw Error(prefix + "factor is not positive");
      s.kind = RopeScaling::Kind::Linear;
      s.factor = factor;
      return s;
    }
    return has_freq_tensor ? llama3(prefix) : s;
  }
  if (type == "none") return has_freq_tensor ? llama3(prefix) : s;
  throw Error("unsupported rope scaling '" + type + "' (lane-tune supports none, linear, llama3 and yarn)");
}

}  // namespace

Arch arch_of(const std::string& name) {
  if (name == "llama") return Arch::Llama;
  if (name == "qwen2") return Arch::Qwen2;
  if (name == "qwen3") return Arch::Qwen3;
  if (name == "qwen2moe") return Arch::Qwen2Moe;
  if (name == "qwen3moe") return Arch::Qwen3Moe;
  if (name == "gpt-oss") return Arch::GptOss;
  if (name == "gemma2") return Arch::Gemma2;
  if (name == "gemma3") return Arch::Gemma3;
  throw Error("unsupported architecture '" + name +
              "' (lane-tune supports llama, qwen2, qwen3, gemma2, gemma3, qwen2moe, qwen3moe, gpt-oss)");
}

bool is_mixture(Arch a) {
  return a == Arch::Qwen2Moe || a == Arch::Qwen3Moe || a == Arch::GptOss;
}

const char* to_string(Arch a) {
  switch (a) {
    case Arch::Llama:
      return "llama";
    case Arch::Qwen2:
      return "qwen2";
    case Arch::Qwen3:
      return "qwen3";
    case Arch::Qwen2Moe:
      return "qwen2moe";
    case Arch::Qwen3Moe:
      return "qwen3moe";
    case Arch::GptOss:
      return "gpt-oss";
    case Arch::Gemma2:
      return "gemma2";
    case Arch::Gemma3:
      return "gemma3";
  }
  return "?";
}

uint32_t Model::attention_width() const {
  // llama.cpp's gemma2 and gemma3 (gemma_pytorch's query_pre_attn_scalar): their 27Bs (46 and 62 layers) scale by
  // d_model / heads.
  const bool the_27b = (arch == Arch::Gemma2 && layers == 46) || (arch == Arch::Gemma3 && layers == 62);
  return the_27b ? d_model / heads : head_dim;
}

float Model::attention_scale() const {
  return 1.f / std::sqrt(static_cast<float>(attention_width()));
}

std::vector<double> Model::rope_inv_freq(bool sliding) const {
  std::vector<double> f(head_dim / 2);
  if (sliding && sliding_rope()) {  // (llama.cpp's rope_freq_base_train_swa, its scale 1)
    for (uint32_t i = 0; i < f.size(); ++i) f[i] = std::pow(double(rope_base_sliding), -2.0 * i / double(head_dim));
    return f;
  }
  for (uint32_t i = 0; i < f.size(); ++i) f[i] = std::pow(double(rope_base), -2.0 * i / double(head_dim));
  if (!rope_freq_factors.empty()) {
    // llama.cpp divides each pair's angle by its stored factor (ggml_rope_ext's freq_factors).
    for (uint32_t i = 0; i < f.size(); ++i) f[i] /= double(rope_freq_factors[i]);
  } else if (scaling.kind == RopeScaling::Kind::Llama3) {
    // The factors llama.cpp's converter stores as rope_freqs.weight, computed from the scaling parameters instead.
    const double pi = 3.14159265358979323846;
    double ctx = scaling.original_context;
    double low_wavelen = ctx / scaling.low_freq_factor, high_wavelen = ctx / scaling.high_freq_factor;
    for (auto& x : f) {
      double wavelen = 2 * pi / x;
      if (wavelen < high_wavelen) continue;
      if (wavelen > low_wavelen) {
        x /= scaling.factor;
        continue;
      }
      double smooth =
          (ctx / wavelen - scaling.low_freq_factor) / (double(scaling.high_freq_factor) - scaling.low_freq_factor);
      x *= (1 - smooth) / scaling.factor + smooth;
    }
  }
  if (scaling.kind == RopeScaling::Kind::Linear)
    for (auto& x : f) x /= double(scaling.factor);
  if (scaling.kind == RopeScaling::Kind::Yarn) {
    // ggml_rope_yarn_corr_dims: the pairs whose wavelength makes `rotations` turns in the original context, floored
    // and ceiled into [0, head_dim - 1]; ggml's rope_yarn_ramp between them: 1 (extrapolated) below, 0 above.
    const double pi = 3.14159265358979323846, dims = head_dim, ctx = scaling.original_context;
    auto corr_dim = [&](double rotations) {
      return dims * std::log(ctx / (rotations * 2 * pi)) / (2 * std::log(double(rope_base)));
    };
    const double low = std::max(0.0, std::floor(corr_dim(scaling.beta_fast)));
    const double high = std::min(dims - 1, std::ceil(corr_dim(scaling.beta_slow)));
    for (uint32_t i = 0; i < f.size(); ++i) {
      const double ramp = 1 - std::clamp((double(i) - low) / std::max(0.001, high - low), 0.0, 1.0);
      f[i] = f[i] / double(scaling.factor) * (1 - ramp) + f[i] * ramp;
    }
  }
  return f;
}

double Model::rope_attention_factor() const {
  if (scaling.kind != RopeScaling::Kind::Yarn) return 1.0;
  return 1.0 + 0.1 * std::log(double(scaling.factor));
}

std::vector<const gguf::TensorInfo*> Layer::tensors() const {
  std::vector<const gguf::TensorInfo*> all;
  for (const gguf::TensorInfo* t : {attn_norm,
                                    wq,
                                    wk,
                                    wv,
                                    wo,
                                    bq,
                                    bk,
                                    bv,
                                    bo,
                                    q_norm,
                                    k_norm,
                                    sinks,
                                    ffn_norm,
                                    w_gate,
                                    w_up,
                                    w_down,
                                    router,
                                    router_bias,
                                    gate_exps,
                                    up_exps,
                                    down_exps,
                                    gate_exps_bias,
                                    up_exps_bias,
                                    down_exps_bias,
                                    shared_gate_inp,
                                    w_gate_shared,
                                    w_up_shared,
                                    w_down_shared,
                                    attn_post_norm,
                                    ffn_post_norm})
    if (t) all.push_back(t);
  return all;
}

bool Layer::is_expert_tensor(const gguf::TensorInfo* t) const {
  return t && (t == gate_exps || t == up_exps || t == down_exps || t == gate_exps_bias || t == up_exps_bias ||
               t == down_exps_bias);
}

uint64_t Model::weight_bytes() const {
  uint64_t total = token_embd->bytes + output_norm->bytes + (tied_output ? 0 : output->bytes);
  if (rope_freqs) total += rope_freqs->bytes;
  for (const Layer& l : layer)
    for (const gguf::TensorInfo* t : l.tensors()) total += t->bytes;
  return total;
}

uint64_t Model::decode_bytes() const {
  uint64_t total =
      tied_output ? weight_bytes() : weight_bytes() - token_embd->bytes + ggml::row_bytes(token_embd->type, d_model);
  // A decode step reads only its experts_used experts' rows of each expert tensor (every expert's are the same size).
  for (const Layer& l : layer)
    for (const gguf::TensorInfo* t : l.tensors())
      if (l.is_expert_tensor(t)) total -= t->bytes - t->bytes / experts * experts_used;
  return total;
}

namespace {

// A mixture's hyperparameters as llama.cpp reads them for the architecture: expert counts and widths, the gating and
// the weights' normalization, the experts' activation, the sliding window.
void read_mixture(const Reader& r, Model& m) {
  m.experts = r.need_uint("expert_count");
  m.experts_used = r.need_uint("expert_used_count");
  if (m.experts == 0) throw Error(r.key("expert_count") + " is 0: a mixture of experts has experts");
  if (m.experts_used == 0 || m.experts_used > m.experts)
    throw Error(r.key("expert_used_count") + " is " + std::to_string(m.experts_used) + ": a token runs 1 to " +
                r.key("expert_count") + " (" + std::to_string(m.experts) + ") experts");
  if (m.arch == Arch::GptOss) {
    m.expert_ffn = r.need_uint("expert_feed_forward_length");
  } else {
    // llama.cpp's qwen2moe and qwen3moe: feed_forward_length / expert_used_count when the key is absent.
    m.expert_ffn = r.opt_uint("expert_feed_forward_length", m.ffn / m.experts_used);
  }
  if (m.expert_ffn == 0)
    throw Error(m.architecture + ": an expert's FFN width is 0 (" + r.key("expert_feed_forward_length") + ")");
  // The shared expert's width (llama.cpp's qwen2moe: feed_forward_length when absent); its tensors decide whether
  // the checkpoint has one.
  if (m.arch != Arch::GptOss) m.shared_ffn = r.opt_uint("expert_shared_feed_forward_length", m.ffn);
  m.gating = m.arch == Arch::GptOss ? Gating::SoftmaxTopK : Gating::Softmax;
  // llama.cpp normalizes qwen3moe's weights (norm_w) and not qwen2moe's or gpt-oss's; the key, where present, says.
  m.norm_expert_weights = r.opt_bool("expert_weights_norm", m.arch == Arch::Qwen3Moe);
  if (m.arch == Arch::GptOss) {
    // llama.cpp's LLM_FFN_SWIGLU_OAI_MOE constants (transformers' GptOssExperts: limit 7.0, alpha 1.702).
    m.swiglu_limit = 7.0f;
    m.swiglu_alpha = 1.702f;
    m.sliding_window = r.need_uint("attention.sliding_window");
    if (m.sliding_window == 0) throw Error(r.key("attention.sliding_window") + " is 0");
  }
}

// Binds layer `i`'s mixture tensors: the router, the experts and, where the architecture has them, their biases and
// the shared expert.
void bind_mixture(Reader& r, Model& m, Layer& l, uint32_t i) {
  auto name = [&](const char* what) { return "blk." + std::to_string(i) + "." + what; };
  const uint64_t d = m.d_model, e = m.experts, f = m.expert_ffn;
  const bool biases = m.arch == Arch::GptOss;
  l.router = r.bind(name("ffn_gate_inp.weight"), {d, e}, true, true);
  if (biases) l.router_bias = r.bind(name("ffn_gate_inp.bias"), {e}, true, false);
  l.gate_exps = r.bind(name("ffn_gate_exps.weight"), {d, f, e}, true, true);
  l.up_exps = r.bind(name("ffn_up_exps.weight"), {d, f, e}, true, true);
  l.down_exps = r.bind(name("ffn_down_exps.weight"), {f, d, e}, true, true);
  if (biases) {
    l.gate_exps_bias = r.bind(name("ffn_gate_exps.bias"), {f, e}, true, false);
    l.up_exps_bias = r.bind(name("ffn_up_exps.bias"), {f, e}, true, false);
    l.down_exps_bias = r.bind(name("ffn_down_exps.bias"), {d, e}, true, false);
  }
  if (m.arch == Arch::GptOss) return;
  // qwen2moe always has a shared expert; lane-tune reads qwen3moe's too where a checkpoint has one.
  const bool required = m.arch == Arch::Qwen2Moe;
  const uint64_t s = m.shared_ffn;
  if (s == 0) {
    if (required)
      throw Error(m.architecture + ": the shared expert's width is 0 (" + r.key("expert_shared_feed_forward_length") +
                  ", else feed_forward_length)");
    return;  // no width to read a shared expert by: any shexp tensor is one the checkpoint has no use for
  }
  l.shared_gate_inp = r.bind(name("ffn_gate_inp_shexp.weight"), {d}, required, true);
  l.w_gate_shared = r.bind(name("ffn_gate_shexp.weight"), {d, s}, required, true);
  l.w_up_shared = r.bind(name("ffn_up_shexp.weight"), {d, s}, required, true);
  l.w_down_shared = r.bind(name("ffn_down_shexp.weight"), {s, d}, required, true);
  const int present = (l.shared_gate_inp != nullptr) + (l.w_gate_shared != nullptr) + (l.w_up_shared != nullptr) +
                      (l.w_down_shared != nullptr);
  if (present != 0 && present != 4)
    throw Error(name("ffn_{gate_inp,gate,up,down}_shexp.weight") +
                ": a shared expert needs all four tensors (lane-tune found " + std::to_string(present) + ")");
}

// A softcap `<arch>.key` (absent: `absent`, 0 for none): finite, and positive where it is applied (llama.cpp divides by
// it).
float read_softcap(const Reader& r, const std::string& key, float absent) {
  const float cap = r.opt_float(key, absent);
  if (!std::isfinite(cap) || cap < 0.f || (cap == 0.f && absent != 0.f))
    throw Error(r.key(key) + " is " + std::to_string(cap) + ": a softcap is a finite number > 0");
  return cap;
}

// The sliding layers of a gemma checkpoint with `attention.sliding_window`, as llama.cpp's load_swa_pattern reads them:
// `attention.sliding_window_pattern` a flag a layer, or n (every n-th layer global, the others sliding; `absent` when
// the key is).
void read_sliding_pattern(const Reader& r, const Model& m, uint32_t absent, std::vector<bool>& sliding) {
  const gguf::Value* pattern = r.find("attention.sliding_window_pattern");
  if (pattern && pattern->type == gguf::ValueType::Array) {
    const auto& items = pattern->as_array().items;
    if (items.size() < m.layers)
      throw Error(r.key("attention.sliding_window_pattern") + " has " + std::to_string(items.size()) + " entries for " +
                  std::to_string(m.layers) + " layers");
    for (uint32_t i = 0; i < m.layers; ++i) {
      try {
        sliding[i] = items[i].type == gguf::ValueType::Bool ? items[i].as_bool() : items[i].as_uint() != 0;
      } catch (const Error&) {
        throw Error(r.key("attention.sliding_window_pattern") + " holds an entry that is not a flag");
      }
    }
    return;
  }
  const uint32_t n = r.opt_uint("attention.sliding_window_pattern", absent);
  for (uint32_t i = 0; i < m.layers; ++i) sliding[i] = n == 0 || i % n < n - 1;  // (llama.cpp's set_swa_pattern)
}

// The gemmas' hyperparameters as llama.cpp's llama_model_gemma2 and llama_model_gemma3 read them: the embedding scale
// sqrt(d_model), GELU, the final logits' softcap (gemma2: 30 when absent; gemma3: none unless named), and the sliding
// layers (`attention.sliding_window`: gemma2 always has them, 4096 positions when absent, every second layer global;
// gemma3 only with the key, every sixth global). gemma2 also softcaps its attention logits (50 when absent); its
// sliding layers rope as the global ones (`rope.freq_base_swa` where named, scaled as they are); gemma3's by their
// own base (`rope.freq_base_swa`, 10000) unscaled.
void read_gemma(const Reader& r, Model& m, std::vector<bool>& sliding) {
  const bool gemma2 = m.arch == Arch::Gemma2;
  m.embed_scale = std::sqrt(static_cast<float>(m.d_model));
  m.ffn_act = Activation::Gelu;
  m.final_softcap = read_softcap(r, "final_logit_softcapping", gemma2 ? 30.f : 0.f);
  if (gemma2) m.attn_softcap = read_softcap(r, "attn_logit_softcapping", 50.f);
  m.sliding_window = r.opt_uint("attention.sliding_window", gemma2 ? 4096 : 0);
  if (m.sliding_window == 0) return;
  const float base_swa = r.opt_float("rope.freq_base_swa", gemma2 ? m.rope_base : 10000.f);
  if (!std::isfinite(base_swa) || !(base_swa > 1.f))
    throw Error(r.key("rope.freq_base_swa") + " is " + std::to_string(base_swa) + ": a rope base is finite and > 1");
  if (!gemma2) {
    m.rope_base_sliding = base_swa;
  } else if (base_swa != m.rope_base) {
    if (m.scaling.kind != RopeScaling::Kind::None)
      throw Error(r.key("rope.freq_base_swa") + " with rope scaling: " +
                  "lane-tune ropes gemma2's sliding layers by a base of their own only unscaled");
    m.rope_base_sliding = base_swa;  // (unscaled, as the global layers)
  }
  read_sliding_pattern(r, m, gemma2 ? 2 : 6, sliding);
}

}  // namespace

Model recognize(const gguf::File& file) {
  // A part of a checkpoint llama.cpp's gguf-split wrote (split.no of split.count, its tensors spread over the parts):
  // said so by name, where the first missing tensor would be the message otherwise.
  if (const gguf::Value* parts = file.find("split.count")) {
    uint64_t count = 0, no = 0;
    try {
      count = parts->as_uint();
      if (const gguf::Value* n = file.find("split.no")) no = n->as_uint();
    } catch (const Error&) {
      throw Error("split.count / split.no are not unsigned integers");
    }
    if (count > 1)
      throw Error("this file is part " + std::to_string(no + 1) + " of " + std::to_string(count) +
                  " of a split checkpoint (llama.cpp's gguf-split): lane-tune reads a checkpoint as one file; merge "
                  "the parts first (llama-gguf-split --merge FIRST_PART.gguf MERGED.gguf)");
  }
  const gguf::Value* arch_value = file.find("general.architecture");
  if (!arch_value) throw Error("checkpoint has no general.architecture");
  if (arch_value->type != gguf::ValueType::String) throw Error("general.architecture is not a string");
  Model m;
  m.architecture = arch_value->as_string();
  m.arch = arch_of(m.architecture);
  if (const gguf::Value* n = file.find("general.name"); n && n->type == gguf::ValueType::String)
    m.name = n->as_string();
  if (m.name.empty()) m.name = m.architecture;

  Reader r(file, m.architecture);
  const bool mixture = is_mixture(m.arch);
  if (!mixture && r.opt_uint("expert_count", 0) > 0)
    throw Error(m.architecture + " with experts (" + r.key("expert_count") +
                ") is not supported: lane-tune reads dense " + m.architecture +
                " only (its mixtures of experts are qwen2moe, qwen3moe and gpt-oss)");
  m.layers = r.need_uint("block_count");
  m.d_model = r.need_uint("embedding_length");
  // A mixture's FFN width is its experts' (llama.cpp reads feed_forward_length only to derive missing widths).
  m.ffn = mixture ? r.opt_uint("feed_forward_length", 0) : r.need_uint("feed_forward_length");
  m.heads = r.need_uint("attention.head_count");
  m.kv_heads = r.opt_uint("attention.head_count_kv", m.heads);
  m.context = r.need_uint("context_length");
  if (m.layers == 0 || m.d_model == 0 || (m.ffn == 0 && !mixture) || m.heads == 0 || m.kv_heads == 0)
    throw Error(m.architecture + " has a zero block_count, embedding_length, feed_forward_length or head count");
  if (m.heads % m.kv_heads != 0)
    throw Error(m.architecture + ": " + std::to_string(m.heads) + " query heads do not group over " +
                std::to_string(m.kv_heads) + " key/value heads");
  uint32_t per_head = m.d_model / m.heads;
  m.head_dim = r.opt_uint("attention.key_length", per_head);
  m.value_dim = r.opt_uint("attention.value_length", per_head);
  if (m.head_dim == 0 || m.head_dim % 2 != 0)
    throw Error(m.architecture + ": head width " + std::to_string(m.head_dim) + " is not a positive even number");
  if (m.value_dim == 0) throw Error(m.architecture + ": value width is 0");
  if (!r.find("attention.key_length") && m.d_model % m.heads != 0)
    throw Error(m.architecture + ": embedding_length is not a multiple of head_count and key_length is absent");
  if (mixture && m.value_dim != m.head_dim)
    throw Error(m.architecture + ": value width " + std::to_string(m.value_dim) + " differs from key width " +
                std::to_string(m.head_dim) + " (llama.cpp's " + m.architecture + " has one head width)");
  uint32_t rope_dims = r.opt_uint("rope.dimension_count", m.head_dim);
  if (rope_dims != m.head_dim)
    throw Error(m.architecture + ".rope.dimension_count is " + std::to_string(rope_dims) + ", not the head width " +
                std::to_string(m.head_dim) + " (partial rope is not supported)");
  m.rope_base = r.opt_float("rope.freq_base", 10000.f);
  if (!std::isfinite(m.rope_base) || !(m.rope_base > 1.f))
    throw Error(m.architecture + ".rope.freq_base is " + std::to_string(m.rope_base) +
                ": a rope base is finite and > 1");
  m.rope_mode = m.arch == Arch::Llama ? RopeMode::Adjacent : RopeMode::Neox;
  {
    const gguf::Value* eps = r.find("attention.layer_norm_rms_epsilon");
    if (!eps) throw Error("checkpoint has no " + m.architecture + ".attention.layer_norm_rms_epsilon");
    m.norm_eps = r.opt_float("attention.layer_norm_rms_epsilon", 0.f);
    if (!std::isfinite(m.norm_eps) || m.norm_eps < 0.f || m.norm_eps > 1.f)
      throw Error(m.architecture + ".attention.layer_norm_rms_epsilon is " + std::to_string(m.norm_eps) +
                  ": a norm's epsilon is a finite number in [0, 1]");
  }

  const gguf::TensorInfo* embd = file.tensor("token_embd.weight");
  if (!embd) throw Error("checkpoint has no tensor token_embd.weight");
  uint32_t vocab_from_embd = embd->dims.size() == 2 ? static_cast<uint32_t>(embd->dims[1]) : 0;
  m.vocab = r.opt_uint("vocab_size", vocab_from_embd);
  if (m.vocab == 0) throw Error("vocabulary size is 0");

  const uint64_t d = m.d_model, q_width = uint64_t{m.heads} * m.head_dim;
  const uint64_t k_width = uint64_t{m.kv_heads} * m.head_dim, v_width = uint64_t{m.kv_heads} * m.value_dim;
  const uint64_t o_width = uint64_t{m.heads} * m.value_dim;
  m.token_embd = r.bind("token_embd.weight", {d, m.vocab}, true, true);
  m.output_norm = r.bind("output_norm.weight", {d}, true, false);
  // (llama.cpp's gemma2 projects by the embedding whatever the file holds: an output.weight is refused as unused)
  if (m.arch != Arch::Gemma2) m.output = r.bind("output.weight", {d, m.vocab}, m.arch == Arch::GptOss, true);
  m.tied_output = m.output == nullptr;
  if (m.tied_output) m.output = m.token_embd;
  if (m.arch == Arch::Llama) {
    m.rope_freqs = r.bind("rope_freqs.weight", {m.head_dim / 2}, false, false);
    if (m.rope_freqs) {
      auto bytes = file.data(*m.rope_freqs);
      m.rope_freq_factors.resize(m.head_dim / 2);
      std::memcpy(m.rope_freq_factors.data(), bytes.data(), m.rope_freq_factors.size() * sizeof(float));
      for (float x : m.rope_freq_factors)
        if (!(x > 0.f) || !std::isfinite(x)) throw Error("rope_freqs.weight holds a factor that is not positive");
    }
  }
  m.scaling = read_scaling(file, r, m.rope_freqs != nullptr, m.context);
  if (mixture) read_mixture(r, m);
  const bool gemma = m.arch == Arch::Gemma2 || m.arch == Arch::Gemma3;
  std::vector<bool> sliding(m.layers, false);
  if (gemma) read_gemma(r, m, sliding);

  const bool gpt_oss = m.arch == Arch::GptOss;
  const bool biases_required = m.arch == Arch::Qwen2 || m.arch == Arch::Qwen2Moe || gpt_oss;
  const bool norms = m.arch == Arch::Qwen3 || m.arch == Arch::Qwen3Moe || m.arch == Arch::Gemma3;
  const bool biases_allowed = !norms;
  m.layer.resize(m.layers);
  for (uint32_t i = 0; i < m.layers; ++i) {
    Layer& l = m.layer[i];
    auto name = [&](const char* what) { return "blk." + std::to_string(i) + "." + what; };
    l.attn_norm = r.bind(name("attn_norm.weight"), {d}, true, false);
    l.wq = r.bind(name("attn_q.weight"), {d, q_width}, true, true);
    l.wk = r.bind(name("attn_k.weight"), {d, k_width}, true, true);
    l.wv = r.bind(name("attn_v.weight"), {d, v_width}, true, true);
    l.wo = r.bind(name("attn_output.weight"), {o_width, d}, true, true);
    if (biases_allowed) {
      l.bq = r.bind(name("attn_q.bias"), {q_width}, biases_required, false);
      l.bk = r.bind(name("attn_k.bias"), {k_width}, biases_required, false);
      l.bv = r.bind(name("attn_v.bias"), {v_width}, biases_required, false);
      if ((l.bq != nullptr) != (l.bk != nullptr) || (l.bq != nullptr) != (l.bv != nullptr))
        throw Error(name("attn_{q,k,v}.bias") + ": lane-tune needs all three biases or none");
    }
    if (norms) {
      l.q_norm = r.bind(name("attn_q_norm.weight"), {m.head_dim}, true, false);
      l.k_norm = r.bind(name("attn_k_norm.weight"), {m.head_dim}, true, false);
    }
    if (gpt_oss) {
      l.bo = r.bind(name("attn_output.bias"), {d}, true, false);
      l.sinks = r.bind(name("attn_sinks.weight"), {m.heads}, true, false);
      // llama.cpp's set_swa_pattern(2): every layer but each second one slides, i.e. the even ones.
      l.sliding = i % 2 == 0;
    }
    if (gemma) {
      l.sliding = sliding[i];
      l.attn_post_norm = r.bind(name("post_attention_norm.weight"), {d}, true, false);
      l.ffn_post_norm = r.bind(name("post_ffw_norm.weight"), {d}, true, false);
    }
    l.ffn_norm = r.bind(name(gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"), {d}, true, false);
    if (mixture) {
      bind_mixture(r, m, l, i);
    } else {
      l.w_gate = r.bind(name("ffn_gate.weight"), {d, m.ffn}, true, true);
      l.w_up = r.bind(name("ffn_up.weight"), {d, m.ffn}, true, true);
      l.w_down = r.bind(name("ffn_down.weight"), {m.ffn, d}, true, true);
    }
    if (i == 0) {
      m.qkv_bias = l.bq != nullptr;
      m.qk_norm = l.q_norm != nullptr;
    } else if (m.qkv_bias != (l.bq != nullptr)) {
      throw Error(name("attn_q.bias") + ": layers disagree on whether q/k/v have biases");
    } else if ((l.w_gate_shared != nullptr) != (m.layer[0].w_gate_shared != nullptr)) {
      throw Error(name("ffn_gate_shexp.weight") + ": layers disagree on whether they have a shared expert");
    }
  }
  if (mixture && !m.layer[0].w_gate_shared) m.shared_ffn = 0;
  m.post_norms = gemma;
  r.check_all_bound();
  return m;
}

}  // namespace lt::model
