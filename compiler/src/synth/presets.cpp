// The model shapes `lane-tune synth` knows: tiny ones for tests, and real models' published configurations.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "compiler/error.hpp"
#include "compiler/synth.hpp"

namespace lt::synth {
namespace {

std::vector<Preset> make_presets() {
  std::vector<Preset> all;
  {
    Preset p;  // llama with llama3 rope scaling and a separate output matrix
    p.name = "tiny-llama";
    p.architecture = "llama";
    p.layers = 2, p.d_model = 256, p.heads = 4, p.kv_heads = 2, p.head_dim = 64, p.ffn = 512, p.vocab = 512;
    p.context = 4096, p.rope_base = 500000.f, p.norm_eps = 1e-5f;
    p.rope_scale_factor = 8.f, p.rope_low_freq = 1.f, p.rope_high_freq = 4.f, p.rope_original_context = 1024;
    all.push_back(p);
  }
  {
    Preset p;  // qwen2: q/k/v biases, tied output
    p.name = "tiny-qwen2";
    p.architecture = "qwen2";
    p.layers = 2, p.d_model = 256, p.heads = 4, p.kv_heads = 2, p.head_dim = 64, p.ffn = 768, p.vocab = 600;
    p.context = 4096, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.tied_output = true, p.qkv_bias = true;
    all.push_back(p);
  }
  {
    Preset p;  // qwen3: q/k norms, GQA, head_dim != d_model / heads
    p.name = "tiny-qwen3";
    p.architecture = "qwen3";
    p.layers = 2, p.d_model = 256, p.heads = 4, p.kv_heads = 2, p.head_dim = 128, p.ffn = 768, p.vocab = 768;
    p.context = 4096, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.qk_norm = true;
    all.push_back(p);
  }
  {
    Preset p;  // gemma3: sandwich norms, GELU, q/k norms, tied output, a sliding layer then a global one (own ropes)
    p.name = "tiny-gemma3";
    p.architecture = "gemma3";
    p.layers = 2, p.d_model = 256, p.heads = 4, p.kv_heads = 1, p.head_dim = 128, p.ffn = 512, p.vocab = 640;
    p.context = 4096, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.tied_output = true, p.qk_norm = true;
    p.rope_scale_factor = 8.f, p.sliding_window = 16, p.sliding_pattern = 2;
    all.push_back(p);
  }
  {
    Preset p;  // gemma2: sandwich norms, GELU, tied output, softcapped attention and logits, sliding and global layers
    p.name = "tiny-gemma2";
    p.architecture = "gemma2";
    p.layers = 2, p.d_model = 256, p.heads = 4, p.kv_heads = 2, p.head_dim = 128, p.ffn = 512, p.vocab = 640;
    p.context = 4096, p.rope_base = 10000.f, p.norm_eps = 1e-6f, p.tied_output = true;
    p.sliding_window = 16, p.attn_softcap = 5.f, p.final_softcap = 5.f;  // (caps that bend the tiny model's logits)
    all.push_back(p);
  }
  {
    Preset p;  // qwen3moe: router and 8 experts, 2 used
    p.name = "tiny-moe";
    p.architecture = "qwen3moe";
    p.layers = 2, p.d_model = 256, p.heads = 4, p.kv_heads = 2, p.head_dim = 64, p.ffn = 768, p.vocab = 512;
    p.context = 4096, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.qk_norm = true;
    p.experts = 8, p.experts_used = 2, p.expert_ffn = 256;
    all.push_back(p);
  }
  {
    Preset p;  // qwen2moe: q/k/v biases, router and 8 experts, 2 used, a shared expert with its gate
    p.name = "tiny-qwen2moe";
    p.architecture = "qwen2moe";
    p.layers = 2, p.d_model = 256, p.heads = 4, p.kv_heads = 2, p.head_dim = 64, p.ffn = 512, p.vocab = 512;
    p.context = 4096, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.qkv_bias = true;
    p.experts = 8, p.experts_used = 2, p.expert_ffn = 256, p.shared_ffn = 512;
    all.push_back(p);
  }
  {
    Preset p;  // gpt-oss: sinks, biases, sliding window, yarn
    p.name = "tiny-gpt-oss";
    p.architecture = "gpt-oss";
    p.layers = 2, p.d_model = 256, p.heads = 4, p.kv_heads = 2, p.head_dim = 64, p.ffn = 256, p.vocab = 512;
    p.context = 4096, p.rope_base = 150000.f, p.norm_eps = 1e-5f, p.qkv_bias = true;
    p.rope_scale_factor = 32.f, p.rope_original_context = 4096;
    p.experts = 4, p.experts_used = 2, p.expert_ffn = 256, p.sliding_window = 128;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "qwen3-0.6b";
    p.architecture = "qwen3";
    p.layers = 28, p.d_model = 1024, p.heads = 16, p.kv_heads = 8, p.head_dim = 128, p.ffn = 3072, p.vocab = 151936;
    p.context = 40960, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.tied_output = true, p.qk_norm = true;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "qwen3-8b";
    p.architecture = "qwen3";
    p.layers = 36, p.d_model = 4096, p.heads = 32, p.kv_heads = 8, p.head_dim = 128, p.ffn = 12288, p.vocab = 151936;
    p.context = 40960, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.qk_norm = true;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "llama-3.2-1b";
    p.architecture = "llama";
    p.layers = 16, p.d_model = 2048, p.heads = 32, p.kv_heads = 8, p.head_dim = 64, p.ffn = 8192, p.vocab = 128256;
    p.context = 131072, p.rope_base = 500000.f, p.norm_eps = 1e-5f, p.tied_output = true;
    p.rope_scale_factor = 32.f, p.rope_low_freq = 1.f, p.rope_high_freq = 4.f, p.rope_original_context = 8192;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "llama-3.1-8b";
    p.architecture = "llama";
    p.layers = 32, p.d_model = 4096, p.heads = 32, p.kv_heads = 8, p.head_dim = 128, p.ffn = 14336, p.vocab = 128256;
    p.context = 131072, p.rope_base = 500000.f, p.norm_eps = 1e-5f;
    p.rope_scale_factor = 8.f, p.rope_low_freq = 1.f, p.rope_high_freq = 4.f, p.rope_original_context = 8192;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "qwen2.5-7b";
    p.architecture = "qwen2";
    p.layers = 28, p.d_model = 3584, p.heads = 28, p.kv_heads = 4, p.head_dim = 128, p.ffn = 18944, p.vocab = 152064;
    p.context = 32768, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.qkv_bias = true;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "qwen3-30b-a3b";
    p.architecture = "qwen3moe";
    p.layers = 48, p.d_model = 2048, p.heads = 32, p.kv_heads = 4, p.head_dim = 128, p.ffn = 6144, p.vocab = 151936;
    p.context = 40960, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.qk_norm = true;
    p.experts = 128, p.experts_used = 8, p.expert_ffn = 768;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "gemma2-2b";
    p.architecture = "gemma2";
    p.layers = 26, p.d_model = 2304, p.heads = 8, p.kv_heads = 4, p.head_dim = 256, p.ffn = 9216, p.vocab = 256000;
    p.context = 8192, p.rope_base = 10000.f, p.norm_eps = 1e-6f, p.tied_output = true;
    p.sliding_window = 4096, p.attn_softcap = 50.f, p.final_softcap = 30.f;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "gemma2-9b";
    p.architecture = "gemma2";
    p.layers = 42, p.d_model = 3584, p.heads = 16, p.kv_heads = 8, p.head_dim = 256, p.ffn = 14336, p.vocab = 256000;
    p.context = 8192, p.rope_base = 10000.f, p.norm_eps = 1e-6f, p.tied_output = true;
    p.sliding_window = 4096, p.attn_softcap = 50.f, p.final_softcap = 30.f;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "gemma3-1b";
    p.architecture = "gemma3";
    p.layers = 26, p.d_model = 1152, p.heads = 4, p.kv_heads = 1, p.head_dim = 256, p.ffn = 6912, p.vocab = 262144;
    p.context = 32768, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.tied_output = true, p.qk_norm = true;
    p.sliding_window = 512;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "gemma3-4b";
    p.architecture = "gemma3";
    p.layers = 34, p.d_model = 2560, p.heads = 8, p.kv_heads = 4, p.head_dim = 256, p.ffn = 10240, p.vocab = 262208;
    p.context = 131072, p.rope_base = 1000000.f, p.norm_eps = 1e-6f, p.tied_output = true, p.qk_norm = true;
    p.rope_scale_factor = 8.f, p.sliding_window = 1024;
    all.push_back(p);
  }
  {
    Preset p;
    p.name = "gpt-oss-20b";
    p.architecture = "gpt-oss";
    p.layers = 24, p.d_model = 2880, p.heads = 64, p.kv_heads = 8, p.head_dim = 64, p.ffn = 2880, p.vocab = 201088;
    p.context = 131072, p.rope_base = 150000.f, p.norm_eps = 1e-5f, p.qkv_bias = true;
    p.rope_scale_factor = 32.f, p.rope_original_context = 4096;
    p.experts = 32, p.experts_used = 4, p.expert_ffn = 2880, p.sliding_window = 128;
    all.push_back(p);
  }
  return all;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = make_presets();
  return all;
}

const Preset& preset(const std::string& name) {
  for (const auto& p : presets())
    if (p.name == name) return p;
  std::string known;
  for (const auto& p : presets()) known += (known.empty() ? "" : ", ") + p.name;
  throw Error("unknown preset '" + name + "' (known: " + known + ")");
}

namespace {

// A shape's fields by their JSON names.
using Field = std::variant<std::string Preset::*, uint32_t Preset::*, float Preset::*, bool Preset::*>;
const std::pair<const char*, Field> kFields[] = {
    {"name", &Preset::name},
    {"architecture", &Preset::architecture},
    {"layers", &Preset::layers},
    {"d_model", &Preset::d_model},
    {"heads", &Preset::heads},
    {"kv_heads", &Preset::kv_heads},
    {"head_dim", &Preset::head_dim},
    {"ffn", &Preset::ffn},
    {"vocab", &Preset::vocab},
    {"context", &Preset::context},
    {"rope_base", &Preset::rope_base},
    {"norm_eps", &Preset::norm_eps},
    {"tied_output", &Preset::tied_output},
    {"qkv_bias", &Preset::qkv_bias},
    {"qk_norm", &Preset::qk_norm},
    {"rope_scale_factor", &Preset::rope_scale_factor},
    {"rope_low_freq", &Preset::rope_low_freq},
    {"rope_high_freq", &Preset::rope_high_freq},
    {"rope_original_context", &Preset::rope_original_context},
    {"experts", &Preset::experts},
    {"experts_used", &Preset::experts_used},
    {"expert_ffn", &Preset::expert_ffn},
    {"shared_ffn", &Preset::shared_ffn},
    {"sliding_window", &Preset::sliding_window},
    {"sliding_pattern", &Preset::sliding_pattern},
    {"attn_softcap", &Preset::attn_softcap},
    {"final_softcap", &Preset::final_softcap},
};

void set_field(Preset& p, const char* name, const Field& field, const nlohmann::json& v) {
  auto bad = [&](const char* want) {
    return Error(std::string("shape field ") + name + " must be " + want + ", not " + v.dump());
  };
  std::visit(
      [&](auto f) {
        using F = decltype(f);
        if constexpr (std::is_same_v<F, std::string Preset::*>) {
          if (!v.is_string()) throw bad("a string");
          p.*f = v.get<std::string>();
        } else if constexpr (std::is_same_v<F, uint32_t Preset::*>) {
          if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX) throw bad("an integer from 0 to 2^32 - 1");
          p.*f = v.get<uint32_t>();
        } else if constexpr (std::is_same_v<F, float Preset::*>) {
          if (!v.is_number() || !std::isfinite(v.get<double>())) throw bad("a finite number");
          p.*f = v.get<float>();
        } else {
          if (!v.is_boolean()) throw bad("true or false");
          p.*f = v.get<bool>();
        }
      },
      field);
}

}  // namespace

Preset parse_shape(std::string_view text, const Preset& base) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > 2) throw Error("a shape is one flat JSON object");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("a shape is not JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error("a shape is a JSON object of fields (layers, d_model, heads, ...), not " + j.dump());
  Preset p = base;
  if (p.name.empty()) p.name = "custom";
  for (const auto& item : j.items()) {  // (not a structured binding: clang 14 cannot capture one, and fuzzes this)
    const std::string& key = item.key();
    const auto& v = item.value();
    const auto* f = std::find_if(std::begin(kFields), std::end(kFields), [&](auto& e) { return key == e.first; });
    if (f == std::end(kFields)) {
      std::string known;
      for (const auto& e : kFields) known += (known.empty() ? "" : ", ") + std::string(e.first);
      throw Error("unknown shape field \"" + key + "\" (known: " + known + ")");
    }
    set_field(p, f->first, f->second, v);
  }
  return p;
}

}  // namespace lt::synth
