// Model recognition: hyperparameters and tensor bindings read as llama.cpp reads them, and clear errors otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "support/test_support.hpp"

namespace lt::test {
namespace {

// A checkpoint to write: metadata and tensor declarations (their data: 1.0 for f32, zero bytes otherwise).
struct Checkpoint {
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    ggml::Type type = ggml::Type::F32;
  };
  std::vector<std::pair<std::string, gguf::Value>> meta;
  std::vector<Tensor> tensors;

  void set(const std::string& key, gguf::Value v) {
    for (auto& [k, old] : meta)
      if (k == key) {
        old = std::move(v);
        return;
      }
    meta.emplace_back(key, std::move(v));
  }
  Tensor* find(const std::string& name) {
    for (auto& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }
  void remove(const std::string& name) {
    std::erase_if(tensors, [&](const Tensor& t) { return t.name == name; });
  }
  void remove_key(const std::string& key) {
    std::erase_if(meta, [&](const auto& e) { return e.first == key; });
  }

  void write(const std::filesystem::path& path) const {
    gguf::Writer w(path);
    for (const auto& [k, v] : meta) w.set(k, v);
    for (const auto& t : tensors) w.add_tensor(t.name, t.dims, t.type);
    w.begin_data();
    for (const auto& t : tensors) {
      uint64_t rows = 1;
      for (size_t i = 1; i < t.dims.size(); ++i) rows *= t.dims[i];
      std::vector<uint8_t> bytes(ggml::row_bytes(t.type, t.dims[0]) * rows, 0);
      if (t.type == ggml::Type::F32)
        for (size_t i = 0; i < bytes.size(); i += 4) {
          float one = 1.f;
          std::memcpy(&bytes[i], &one, 4);
        }
      w.write(bytes);
    }
    w.finish();
  }
};

// A two-layer dense checkpoint of `arch` (d_model 16, 4 heads over 2 key/value heads, ffn 32, vocab 32), with the
// tensors llama.cpp expects for it.
Checkpoint dense(const std::string& arch, bool tied = true) {
  Checkpoint c;
  const uint64_t d = 16, heads = 4, kv = 2, hd = 4, ffn = 32, vocab = 32;
  c.set("general.architecture", gguf::Value::str(arch));
  c.set("general.name", gguf::Value::str("tiny " + arch));
  c.set(arch + ".block_count", gguf::Value::u32(2));
  c.set(arch + ".context_length", gguf::Value::u32(64));
  c.set(arch + ".embedding_length", gguf::Value::u32(d));
  c.set(arch + ".feed_forward_length", gguf::Value::u32(ffn));
  c.set(arch + ".attention.head_count", gguf::Value::u32(heads));
  c.set(arch + ".attention.head_count_kv", gguf::Value::u32(kv));
  c.set(arch + ".rope.freq_base", gguf::Value::f32(500000.f));
  c.set(arch + ".attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-6f));
  c.tensors.push_back({"token_embd.weight", {d, vocab}, ggml::Type::F16});
  c.tensors.push_back({"output_norm.weight", {d}});
  if (!tied) c.tensors.push_back({"output.weight", {d, vocab}, ggml::Type::BF16});
  for (int i = 0; i < 2; ++i) {
    std::string b = "blk." + std::to_string(i) + ".";
    c.tensors.push_back({b + "attn_norm.weight", {d}});
    c.tensors.push_back({b + "attn_q.weight", {d, heads * hd}, ggml::Type::F16});
    c.tensors.push_back({b + "attn_k.weight", {d, kv * hd}, ggml::Type::F16});
    c.tensors.push_back({b + "attn_v.weight", {d, kv * hd}, ggml::Type::F16});
    if (arch == "qwen2") {
      c.tensors.push_back({b + "attn_q.bias", {heads * hd}});
      c.tensors.push_back({b + "attn_k.bias", {kv * hd}});
      c.tensors.push_back({b + "attn_v.bias", {kv * hd}});
    }
    if (arch == "qwen3" || arch == "gemma3") {
      c.tensors.push_back({b + "attn_q_norm.weight", {hd}});
      c.tensors.push_back({b + "attn_k_norm.weight", {hd}});
    }
    c.tensors.push_back({b + "attn_output.weight", {heads * hd, d}, ggml::Type::F16});
    const bool gemma = arch == "gemma2" || arch == "gemma3";
    if (gemma) c.tensors.push_back({b + "post_attention_norm.weight", {d}});
    c.tensors.push_back({b + "ffn_norm.weight", {d}});
    c.tensors.push_back({b + "ffn_gate.weight", {d, ffn}, ggml::Type::F16});
    c.tensors.push_back({b + "ffn_up.weight", {d, ffn}, ggml::Type::F16});
    c.tensors.push_back({b + "ffn_down.weight", {ffn, d}, ggml::Type::Q8_0});
    if (gemma) c.tensors.push_back({b + "post_ffw_norm.weight", {d}});
  }
  return c;
}

// A two-layer mixture-of-experts checkpoint of `arch` (qwen3moe, qwen2moe or gpt-oss) with the tensors llama.cpp
// expects for it: d_model 16, 4 heads of 4 over 2 key/value heads, 4 experts of width 8 (2 used); qwen2moe's shared
// expert 12 wide; gpt-oss's biases, sinks, sliding window of 8 and YaRN keys.
Checkpoint mixture(const std::string& arch) {
  Checkpoint c;
  const uint64_t d = 16, heads = 4, kv = 2, hd = 4, experts = 4, f = 8, shared = 12, vocab = 32;
  const bool gpt_oss = arch == "gpt-oss";
  c.set("general.architecture", gguf::Value::str(arch));
  c.set(arch + ".block_count", gguf::Value::u32(2));
  c.set(arch + ".context_length", gguf::Value::u32(64));
  c.set(arch + ".embedding_length", gguf::Value::u32(d));
  c.set(arch + ".feed_forward_length", gguf::Value::u32(24));
  c.set(arch + ".attention.head_count", gguf::Value::u32(heads));
  c.set(arch + ".attention.head_count_kv", gguf::Value::u32(kv));
  c.set(arch + ".rope.freq_base", gguf::Value::f32(10000.f));
  c.set(arch + ".attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-6f));
  c.set(arch + ".expert_count", gguf::Value::u32(experts));
  c.set(arch + ".expert_used_count", gguf::Value::u32(2));
  c.set(arch + ".expert_feed_forward_length", gguf::Value::u32(f));
  if (arch == "qwen2moe") c.set(arch + ".expert_shared_feed_forward_length", gguf::Value::u32(shared));
  if (gpt_oss) {
    c.set(arch + ".attention.sliding_window", gguf::Value::u32(8));
    c.set(arch + ".rope.scaling.type", gguf::Value::str("yarn"));
    c.set(arch + ".rope.scaling.factor", gguf::Value::f32(32.f));
    c.set(arch + ".rope.scaling.original_context_length", gguf::Value::u32(4096));
  }
  c.tensors.push_back({"token_embd.weight", {d, vocab}, ggml::Type::F16});
  c.tensors.push_back({"output_norm.weight", {d}});
  c.tensors.push_back({"output.weight", {d, vocab}, ggml::Type::F16});
  for (int i = 0; i < 2; ++i) {
    std::string b = "blk." + std::to_string(i) + ".";
    c.tensors.push_back({b + "attn_norm.weight", {d}});
    c.tensors.push_back({b + "attn_q.weight", {d, heads * hd}, ggml::Type::F16});
    c.tensors.push_back({b + "attn_k.weight", {d, kv * hd}, ggml::Type::F16});
    c.tensors.push_back({b + "attn_v.weight", {d, kv * hd}, ggml::Type::F16});
    c.tensors.push_back({b + "attn_output.weight", {heads * hd, d}, ggml::Type::F16});
    if (arch != "qwen3moe") {
      c.tensors.push_back({b + "attn_q.bias", {heads * hd}});
      c.tensors.push_back({b + "attn_k.bias", {kv * hd}});
      c.tensors.push_back({b + "attn_v.bias", {kv * hd}});
    } else {
      c.tensors.push_back({b + "attn_q_norm.weight", {hd}});
      c.tensors.push_back({b + "attn_k_norm.weight", {hd}});
    }
    if (gpt_oss) {
      c.tensors.push_back({b + "attn_output.bias", {d}});
      c.tensors.push_back({b + "attn_sinks.weight", {heads}});
      c.tensors.push_back({b + "post_attention_norm.weight", {d}});
    } else {
      c.tensors.push_back({b + "ffn_norm.weight", {d}});
    }
    c.tensors.push_back({b + "ffn_gate_inp.weight", {d, experts}});
    c.tensors.push_back({b + "ffn_gate_exps.weight", {d, f, experts}, ggml::Type::F16});
    c.tensors.push_back({b + "ffn_up_exps.weight", {d, f, experts}, ggml::Type::F16});
    c.tensors.push_back({b + "ffn_down_exps.weight", {f, d, experts}, ggml::Type::F16});
    if (gpt_oss) {
      c.tensors.push_back({b + "ffn_gate_inp.bias", {experts}});
      c.tensors.push_back({b + "ffn_gate_exps.bias", {f, experts}});
      c.tensors.push_back({b + "ffn_up_exps.bias", {f, experts}});
      c.tensors.push_back({b + "ffn_down_exps.bias", {d, experts}});
    }
    if (arch == "qwen2moe") {
      c.tensors.push_back({b + "ffn_gate_inp_shexp.weight", {d}});
      c.tensors.push_back({b + "ffn_gate_shexp.weight", {d, shared}, ggml::Type::F16});
      c.tensors.push_back({b + "ffn_up_shexp.weight", {d, shared}, ggml::Type::F16});
      c.tensors.push_back({b + "ffn_down_shexp.weight", {shared, d}, ggml::Type::F16});
    }
  }
  return c;
}

// Writes `c`, recognizes it, and hands the model (and its file, which it points into) to `check`.
template <class Check>
void with_model(const Checkpoint& c, Check check) {
  TempDir dir;
  c.write(dir / "m.gguf");
  auto file = gguf::File::open(dir / "m.gguf");
  check(model::recognize(file), file);
}

// The message recognize() throws for `c` (fails the test when it accepts it).
std::string refusal(const Checkpoint& c) {
  TempDir dir;
  c.write(dir / "m.gguf");
  auto file = gguf::File::open(dir / "m.gguf");
  try {
    model::recognize(file);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "recognize accepted the checkpoint";
  return "";
}

TEST(Model, RecognizesLlama) {
  with_model(dense("llama"), [](const model::Model& m, const gguf::File& f) {
    EXPECT_EQ(m.arch, model::Arch::Llama);
    EXPECT_EQ(m.architecture, "llama");
    EXPECT_EQ(m.name, "tiny llama");
    EXPECT_EQ(m.layers, 2u);
    EXPECT_EQ(m.d_model, 16u);
    EXPECT_EQ(m.heads, 4u);
    EXPECT_EQ(m.kv_heads, 2u);
    EXPECT_EQ(m.group(), 2u);
    EXPECT_EQ(m.head_dim, 4u);
    EXPECT_EQ(m.value_dim, 4u);
    EXPECT_EQ(m.ffn, 32u);
    EXPECT_EQ(m.vocab, 32u);
    EXPECT_EQ(m.context, 64u);
    EXPECT_EQ(m.rope_base, 500000.f);
    EXPECT_EQ(m.rope_mode, model::RopeMode::Adjacent);
    EXPECT_EQ(m.scaling.kind, model::RopeScaling::Kind::None);
    EXPECT_EQ(m.norm_eps, 1e-6f);
    EXPECT_TRUE(m.tied_output);
    EXPECT_EQ(m.output, m.token_embd);
    EXPECT_FALSE(m.qkv_bias);
    EXPECT_FALSE(m.qk_norm);
    EXPECT_EQ(m.rope_freqs, nullptr);
    ASSERT_EQ(m.layer.size(), 2u);
    EXPECT_EQ(m.layer[1].w_down, f.tensor("blk.1.ffn_down.weight"));
    EXPECT_EQ(m.layer[0].bq, nullptr);
    EXPECT_FLOAT_EQ(m.attention_scale(), 0.5f);
    EXPECT_STREQ(model::to_string(m.arch), "llama");
  });
}

TEST(Model, SeparateOutputIsBound) {
  with_model(dense("llama", false), [](const model::Model& m, const gguf::File& f) {
    EXPECT_FALSE(m.tied_output);
    EXPECT_EQ(m.output, f.tensor("output.weight"));
  });
}

TEST(Model, Qwen2HasBiasesAndNeoxRope) {
  with_model(dense("qwen2"), [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.arch, model::Arch::Qwen2);
    EXPECT_EQ(m.rope_mode, model::RopeMode::Neox);
    EXPECT_TRUE(m.qkv_bias);
    EXPECT_NE(m.layer[1].bv, nullptr);
  });
  Checkpoint c = dense("qwen2");
  c.remove("blk.1.attn_k.bias");
  EXPECT_NE(refusal(c).find("blk.1.attn_k.bias"), std::string::npos);
}

TEST(Model, LlamaMayHaveAllThreeBiases) {
  Checkpoint c = dense("llama");
  c.tensors.push_back({"blk.0.attn_q.bias", {16}});
  EXPECT_NE(refusal(c).find("bias"), std::string::npos);
  c.tensors.push_back({"blk.0.attn_k.bias", {8}});
  c.tensors.push_back({"blk.0.attn_v.bias", {8}});
  c.tensors.push_back({"blk.1.attn_q.bias", {16}});
  c.tensors.push_back({"blk.1.attn_k.bias", {8}});
  c.tensors.push_back({"blk.1.attn_v.bias", {8}});
  with_model(c, [](const model::Model& m, const gguf::File&) { EXPECT_TRUE(m.qkv_bias); });
}

TEST(Model, Qwen3HasQkNormsAndExplicitHeadWidths) {
  Checkpoint c = dense("qwen3");
  // Head widths apart from d_model/heads, as qwen3 has them: keys 8 wide, values 6 wide.
  c.set("qwen3.attention.key_length", gguf::Value::u32(8));
  c.set("qwen3.attention.value_length", gguf::Value::u32(6));
  for (int i = 0; i < 2; ++i) {
    std::string b = "blk." + std::to_string(i) + ".";
    c.find(b + "attn_q.weight")->dims = {16, 32};
    c.find(b + "attn_k.weight")->dims = {16, 16};
    c.find(b + "attn_v.weight")->dims = {16, 12};
    c.find(b + "attn_output.weight")->dims = {24, 16};
    c.find(b + "attn_q_norm.weight")->dims = {8};
    c.find(b + "attn_k_norm.weight")->dims = {8};
  }
  with_model(c, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.arch, model::Arch::Qwen3);
    EXPECT_EQ(m.rope_mode, model::RopeMode::Neox);
    EXPECT_TRUE(m.qk_norm);
    EXPECT_FALSE(m.qkv_bias);
    EXPECT_EQ(m.head_dim, 8u);
    EXPECT_EQ(m.value_dim, 6u);
    EXPECT_FLOAT_EQ(m.attention_scale(), 1.f / std::sqrt(8.f));
  });
  Checkpoint missing = dense("qwen3");
  missing.remove("blk.0.attn_q_norm.weight");
  EXPECT_NE(refusal(missing).find("blk.0.attn_q_norm.weight"), std::string::npos);
}

// `c` (two layers) with layers 2 .. n - 1 copies of its layer 0.
Checkpoint with_layers(Checkpoint c, int n) {
  for (const auto& [key, value] : std::vector(c.meta))
    if (key == "general.architecture") c.set(value.as_string() + ".block_count", gguf::Value::u32(uint32_t(n)));
  const std::vector<Checkpoint::Tensor> first = c.tensors;
  for (int i = 2; i < n; ++i)
    for (const Checkpoint::Tensor& t : first)
      if (t.name.rfind("blk.0.", 0) == 0)
        c.tensors.push_back({"blk." + std::to_string(i) + t.name.substr(5), t.dims, t.type});
  return c;
}

// Checkpoint `c` of `arch` (dense's widths) with its heads 8 wide (key_length 8), not d_model / heads (4): the gemma
// 27Bs' attention scale rule tells them apart.
Checkpoint heads_8_wide(Checkpoint c, const std::string& arch) {
  c.set(arch + ".attention.key_length", gguf::Value::u32(8));
  c.set(arch + ".attention.value_length", gguf::Value::u32(8));
  for (Checkpoint::Tensor& t : c.tensors) {
    auto is = [&](const char* what) { return t.name.find(what) != std::string::npos; };
    if (is("attn_q.")) t.dims = {16, 32};
    if (is("attn_k.") || is("attn_v.")) t.dims = {16, 16};
    if (is("attn_output.")) t.dims = {32, 16};
    if (is("attn_q_norm") || is("attn_k_norm")) t.dims = {8};
  }
  return c;
}

// gemma3 as llama.cpp's llama_model_gemma3 reads it: sandwich norms bound, GELU, the embedding scale sqrt(d_model),
// NeoX rope with q/k norms; with a sliding window, every 6th layer global unless attention.sliding_window_pattern says
// otherwise (n, or a flag a layer), the sliding layers roping by rope.freq_base_swa (10000 when absent) without the
// global layers' scaling; the 27B's (62 layers) attention scale of d_model / heads; a final logit softcap where named.
TEST(Model, RecognizesGemma3) {
  with_model(dense("gemma3"), [](const model::Model& m, const gguf::File& f) {
    EXPECT_EQ(m.arch, model::Arch::Gemma3);
    EXPECT_STREQ(model::to_string(m.arch), "gemma3");
    EXPECT_EQ(m.ffn_act, model::Activation::Gelu);
    EXPECT_FLOAT_EQ(m.embed_scale, 4.f);
    EXPECT_EQ(m.rope_mode, model::RopeMode::Neox);
    EXPECT_TRUE(m.qk_norm && m.post_norms && m.tied_output);
    EXPECT_EQ(m.layer[1].attn_post_norm, f.tensor("blk.1.post_attention_norm.weight"));
    EXPECT_EQ(m.layer[1].ffn_post_norm, f.tensor("blk.1.post_ffw_norm.weight"));
    EXPECT_EQ(m.sliding_window, 0u);  // (no window: every layer global, one rope)
    EXPECT_FALSE(m.sliding_rope() || m.layer[0].sliding);
    EXPECT_EQ(m.attention_width(), 4u);
    EXPECT_EQ(m.attn_softcap, 0.f);
    EXPECT_EQ(m.final_softcap, 0.f);
  });
  Checkpoint c = with_layers(dense("gemma3"), 8);
  c.set("gemma3.attention.sliding_window", gguf::Value::u32(512));
  c.set("gemma3.rope.scaling.type", gguf::Value::str("linear"));
  c.set("gemma3.rope.scaling.factor", gguf::Value::f32(8.f));
  with_model(c, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.sliding_window, 512u);
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(m.layer[i].sliding, i % 6 != 5) << i;
    EXPECT_EQ(m.rope_base_sliding, 10000.f);
    const std::vector<double> global = m.rope_inv_freq(), local = m.rope_inv_freq(true);
    EXPECT_DOUBLE_EQ(global[1], std::pow(500000.0, -2.0 / 4) / 8);  // (linear scaling, the global layers' only)
    EXPECT_DOUBLE_EQ(local[1], std::pow(10000.0, -2.0 / 4));
  });
  c.set("gemma3.attention.sliding_window_pattern", gguf::Value::u32(2));
  c.set("gemma3.rope.freq_base_swa", gguf::Value::f32(20000.f));
  with_model(c, [](const model::Model& m, const gguf::File&) {
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(m.layer[i].sliding, i % 2 == 0) << i;
    EXPECT_EQ(m.rope_base_sliding, 20000.f);
  });
  std::vector<gguf::Value> flags;
  for (int i = 0; i < 8; ++i) flags.push_back(gguf::Value::boolean(i == 3));
  c.set("gemma3.attention.sliding_window_pattern", gguf::Value::array(gguf::ValueType::Bool, flags));
  with_model(c, [](const model::Model& m, const gguf::File&) {
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(m.layer[i].sliding, i == 3) << i;
  });
  // The 27B's rule: 62 layers, heads 8 wide where d_model / heads is 4.
  with_model(heads_8_wide(with_layers(dense("gemma3"), 62), "gemma3"), [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.head_dim, 8u);
    EXPECT_EQ(m.attention_width(), 4u);  // d_model 16 / 4 heads, not the head width
    EXPECT_FLOAT_EQ(m.attention_scale(), 0.5f);
  });
  Checkpoint capped = dense("gemma3");
  capped.set("gemma3.final_logit_softcapping", gguf::Value::f32(30.f));
  with_model(capped, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.final_softcap, 30.f);
    EXPECT_EQ(m.attn_softcap, 0.f);
  });
  capped.set("gemma3.final_logit_softcapping", gguf::Value::f32(-1.f));
  EXPECT_NE(refusal(capped).find("final_logit_softcapping is -1"), std::string::npos) << refusal(capped);
  Checkpoint no_post = dense("gemma3");
  no_post.remove("blk.1.post_ffw_norm.weight");
  EXPECT_NE(refusal(no_post).find("blk.1.post_ffw_norm.weight"), std::string::npos);
}

// gemma2 as llama.cpp's llama_model_gemma2 reads it: gemma3's sandwich norms, GELU and embedding scale without q/k
// norms; its attention logits softcapped (attn_logit_softcapping, 50 when absent) and its output logits
// (final_logit_softcapping, 30); sliding layers always (a window of 4096 when absent), every second layer global unless
// attention.sliding_window_pattern says otherwise, roping as the global layers (rope.freq_base_swa where named, refused
// with scaling); the 27B's (46 layers) attention scale of d_model / heads; the output always the embedding (an
// output.weight refused as unused, as llama.cpp's tensor count refuses it).
TEST(Model, RecognizesGemma2) {
  with_model(with_layers(dense("gemma2"), 4), [](const model::Model& m, const gguf::File& f) {
    EXPECT_EQ(m.arch, model::Arch::Gemma2);
    EXPECT_STREQ(model::to_string(m.arch), "gemma2");
    EXPECT_EQ(m.ffn_act, model::Activation::Gelu);
    EXPECT_FLOAT_EQ(m.embed_scale, 4.f);
    EXPECT_EQ(m.rope_mode, model::RopeMode::Neox);
    EXPECT_TRUE(m.post_norms && m.tied_output);
    EXPECT_FALSE(m.qk_norm);
    EXPECT_EQ(m.layer[1].attn_post_norm, f.tensor("blk.1.post_attention_norm.weight"));
    EXPECT_EQ(m.attn_softcap, 50.f);
    EXPECT_EQ(m.final_softcap, 30.f);
    EXPECT_EQ(m.sliding_window, 4096u);
    for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(m.layer[i].sliding, i % 2 == 0) << i;
    EXPECT_FALSE(m.sliding_rope());
    EXPECT_EQ(m.attention_width(), 4u);
  });
  Checkpoint c = with_layers(dense("gemma2"), 6);
  c.set("gemma2.attn_logit_softcapping", gguf::Value::f32(20.f));
  c.set("gemma2.final_logit_softcapping", gguf::Value::f32(15.f));
  c.set("gemma2.attention.sliding_window", gguf::Value::u32(64));
  c.set("gemma2.attention.sliding_window_pattern", gguf::Value::u32(3));
  c.set("gemma2.rope.freq_base_swa", gguf::Value::f32(10000.f));
  with_model(c, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.attn_softcap, 20.f);
    EXPECT_EQ(m.final_softcap, 15.f);
    EXPECT_EQ(m.sliding_window, 64u);
    for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(m.layer[i].sliding, i % 3 != 2) << i;
    EXPECT_EQ(m.rope_base_sliding, 10000.f);  // (its own base; the global layers' 500000)
    EXPECT_DOUBLE_EQ(m.rope_inv_freq(true)[1], std::pow(10000.0, -2.0 / 4));
    EXPECT_DOUBLE_EQ(m.rope_inv_freq()[1], std::pow(500000.0, -2.0 / 4));
  });
  Checkpoint scaled = c;
  scaled.set("gemma2.rope.scaling.type", gguf::Value::str("linear"));
  scaled.set("gemma2.rope.scaling.factor", gguf::Value::f32(4.f));
  EXPECT_NE(refusal(scaled).find("gemma2.rope.freq_base_swa with rope scaling"), std::string::npos) << refusal(scaled);
  scaled.remove_key("gemma2.rope.freq_base_swa");
  with_model(scaled, [](const model::Model& m, const gguf::File&) {
    EXPECT_FALSE(m.sliding_rope());  // (the sliding layers scaled as the global ones, llama.cpp's freq_scale_train_swa)
    EXPECT_DOUBLE_EQ(m.rope_inv_freq(true)[1], std::pow(500000.0, -2.0 / 4) / 4);
  });
  Checkpoint zero = dense("gemma2");
  zero.set("gemma2.attn_logit_softcapping", gguf::Value::f32(0.f));
  EXPECT_NE(refusal(zero).find("attn_logit_softcapping is 0"), std::string::npos) << refusal(zero);
  EXPECT_NE(refusal(dense("gemma2", false)).find("output.weight"), std::string::npos);
  // The 27B's rule: 46 layers.
  with_model(heads_8_wide(with_layers(dense("gemma2"), 46), "gemma2"),
             [](const model::Model& m, const gguf::File&) { EXPECT_EQ(m.attention_width(), 4u); });
}

// A part of a checkpoint llama.cpp's gguf-split wrote says so, and how to merge it; a split of one part is the file.
TEST(Model, APartOfASplitCheckpointIsNamed) {
  Checkpoint part = dense("llama");
  part.set("split.no", gguf::Value{gguf::ValueType::U16, uint64_t{1}});
  part.set("split.count", gguf::Value{gguf::ValueType::U16, uint64_t{3}});
  part.set("split.tensors.count", gguf::Value::i32(40));
  const std::string why = refusal(part);
  EXPECT_NE(why.find("part 2 of 3"), std::string::npos) << why;
  EXPECT_NE(why.find("--merge"), std::string::npos) << why;
  Checkpoint whole = dense("llama");
  whole.set("split.no", gguf::Value{gguf::ValueType::U16, uint64_t{0}});
  whole.set("split.count", gguf::Value{gguf::ValueType::U16, uint64_t{1}});
  with_model(whole, [](const model::Model& m, const gguf::File&) { EXPECT_EQ(m.layers, 2u); });
}

TEST(Model, UnsupportedArchitectureIsNamed) {
  Checkpoint c = dense("llama");
  c.set("general.architecture", gguf::Value::str("gpt2"));
  EXPECT_NE(refusal(c).find("gpt2"), std::string::npos);
}

TEST(Model, ExpertsInADenseArchitectureAreRefused) {
  Checkpoint c = dense("qwen2");
  c.set("qwen2.expert_count", gguf::Value::u32(8));
  EXPECT_NE(refusal(c).find("qwen2.expert_count"), std::string::npos);
}

TEST(Model, RecognizesQwen3Moe) {
  with_model(mixture("qwen3moe"), [](const model::Model& m, const gguf::File& f) {
    EXPECT_EQ(m.arch, model::Arch::Qwen3Moe);
    EXPECT_STREQ(model::to_string(m.arch), "qwen3moe");
    EXPECT_TRUE(m.has_experts());
    EXPECT_EQ(m.experts, 4u);
    EXPECT_EQ(m.experts_used, 2u);
    EXPECT_EQ(m.expert_ffn, 8u);
    EXPECT_EQ(m.shared_ffn, 0u);
    EXPECT_EQ(m.ffn, 24u);
    EXPECT_EQ(m.gating, model::Gating::Softmax);
    EXPECT_TRUE(m.norm_expert_weights);  // llama.cpp's qwen3moe normalizes the selected weights
    EXPECT_EQ(m.swiglu_limit, 0.f);
    EXPECT_EQ(m.sliding_window, 0u);
    EXPECT_EQ(m.rope_mode, model::RopeMode::Neox);
    EXPECT_TRUE(m.qk_norm);
    EXPECT_FALSE(m.qkv_bias);
    const model::Layer& l = m.layer[1];
    EXPECT_EQ(l.router, f.tensor("blk.1.ffn_gate_inp.weight"));
    EXPECT_EQ(l.gate_exps, f.tensor("blk.1.ffn_gate_exps.weight"));
    EXPECT_EQ(l.up_exps, f.tensor("blk.1.ffn_up_exps.weight"));
    EXPECT_EQ(l.down_exps, f.tensor("blk.1.ffn_down_exps.weight"));
    EXPECT_EQ(l.ffn_norm, f.tensor("blk.1.ffn_norm.weight"));
    EXPECT_EQ(l.w_gate, nullptr);
    EXPECT_EQ(l.router_bias, nullptr);
    EXPECT_EQ(l.w_gate_shared, nullptr);
    EXPECT_EQ(l.sinks, nullptr);
    EXPECT_FALSE(l.sliding);
  });
  // A key, where present, says whether the weights are normalized; the expert width falls back as llama.cpp's does.
  Checkpoint c = mixture("qwen3moe");
  c.set("qwen3moe.expert_weights_norm", gguf::Value::boolean(false));
  std::erase_if(c.meta, [](const auto& kv) { return kv.first == "qwen3moe.expert_feed_forward_length"; });
  c.set("qwen3moe.feed_forward_length", gguf::Value::u32(16));
  with_model(c, [](const model::Model& m, const gguf::File&) {
    EXPECT_FALSE(m.norm_expert_weights);
    EXPECT_EQ(m.expert_ffn, 8u);  // feed_forward_length / expert_used_count
  });
}

TEST(Model, Qwen2MoeHasASharedExpert) {
  with_model(mixture("qwen2moe"), [](const model::Model& m, const gguf::File& f) {
    EXPECT_EQ(m.arch, model::Arch::Qwen2Moe);
    EXPECT_EQ(m.shared_ffn, 12u);
    EXPECT_FALSE(m.norm_expert_weights);
    EXPECT_TRUE(m.qkv_bias);
    EXPECT_EQ(m.layer[0].shared_gate_inp, f.tensor("blk.0.ffn_gate_inp_shexp.weight"));
    EXPECT_EQ(m.layer[0].w_gate_shared, f.tensor("blk.0.ffn_gate_shexp.weight"));
    EXPECT_EQ(m.layer[1].w_up_shared, f.tensor("blk.1.ffn_up_shexp.weight"));
    EXPECT_EQ(m.layer[1].w_down_shared, f.tensor("blk.1.ffn_down_shexp.weight"));
  });
  // llama.cpp's qwen2moe requires it; its gate may be stored [d_model, 1] (ggml reads that as [d_model]).
  Checkpoint missing = mixture("qwen2moe");
  missing.remove("blk.1.ffn_up_shexp.weight");
  EXPECT_NE(refusal(missing).find("blk.1.ffn_up_shexp.weight"), std::string::npos);
  Checkpoint column = mixture("qwen2moe");
  column.find("blk.0.ffn_gate_inp_shexp.weight")->dims = {16, 1};
  with_model(column, [](const model::Model& m, const gguf::File&) { EXPECT_NE(m.layer[0].shared_gate_inp, nullptr); });
}

TEST(Model, Qwen3MoeReadsASharedExpertWhereItHasOne) {
  Checkpoint c = mixture("qwen3moe");
  c.set("qwen3moe.expert_shared_feed_forward_length", gguf::Value::u32(12));
  for (int i = 0; i < 2; ++i) {
    std::string b = "blk." + std::to_string(i) + ".";
    c.tensors.push_back({b + "ffn_gate_inp_shexp.weight", {16}});
    c.tensors.push_back({b + "ffn_gate_shexp.weight", {16, 12}, ggml::Type::F16});
    c.tensors.push_back({b + "ffn_up_shexp.weight", {16, 12}, ggml::Type::F16});
    c.tensors.push_back({b + "ffn_down_shexp.weight", {12, 16}, ggml::Type::F16});
  }
  with_model(c, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.shared_ffn, 12u);
    EXPECT_NE(m.layer[1].w_down_shared, nullptr);
  });
  Checkpoint partial = c;
  partial.remove("blk.1.ffn_gate_inp_shexp.weight");
  EXPECT_NE(refusal(partial).find("shared expert"), std::string::npos);
}

TEST(Model, RecognizesGptOss) {
  with_model(mixture("gpt-oss"), [](const model::Model& m, const gguf::File& f) {
    EXPECT_EQ(m.arch, model::Arch::GptOss);
    EXPECT_STREQ(model::to_string(m.arch), "gpt-oss");
    EXPECT_EQ(m.gating, model::Gating::SoftmaxTopK);
    EXPECT_FALSE(m.norm_expert_weights);
    EXPECT_EQ(m.swiglu_limit, 7.0f);
    EXPECT_EQ(m.swiglu_alpha, 1.702f);
    EXPECT_EQ(m.sliding_window, 8u);
    EXPECT_TRUE(m.layer[0].sliding);  // llama.cpp's set_swa_pattern(2): the even layers slide
    EXPECT_FALSE(m.layer[1].sliding);
    EXPECT_EQ(m.rope_mode, model::RopeMode::Neox);
    EXPECT_TRUE(m.qkv_bias);
    EXPECT_FALSE(m.tied_output);
    EXPECT_EQ(m.scaling.kind, model::RopeScaling::Kind::Yarn);
    EXPECT_EQ(m.scaling.factor, 32.f);
    EXPECT_EQ(m.scaling.original_context, 4096u);
    EXPECT_EQ(m.scaling.beta_fast, 32.f);
    EXPECT_EQ(m.scaling.beta_slow, 1.f);
    EXPECT_DOUBLE_EQ(m.rope_attention_factor(), 1 + 0.1 * std::log(32.0));
    const model::Layer& l = m.layer[1];
    EXPECT_EQ(l.bo, f.tensor("blk.1.attn_output.bias"));
    EXPECT_EQ(l.sinks, f.tensor("blk.1.attn_sinks.weight"));
    EXPECT_EQ(l.ffn_norm, f.tensor("blk.1.post_attention_norm.weight"));
    EXPECT_EQ(l.router_bias, f.tensor("blk.1.ffn_gate_inp.bias"));
    EXPECT_EQ(l.gate_exps_bias, f.tensor("blk.1.ffn_gate_exps.bias"));
    EXPECT_EQ(l.up_exps_bias, f.tensor("blk.1.ffn_up_exps.bias"));
    EXPECT_EQ(l.down_exps_bias, f.tensor("blk.1.ffn_down_exps.bias"));
  });
}

// Each malformed mixture is refused naming what is wrong.
TEST(Model, MalformedMixturesAreRefused) {
  struct Case {
    std::string arch, why;
    std::function<void(Checkpoint&)> spoil;
  };
  const std::vector<Case> cases = {
      {"qwen3moe", "expert_used_count",
       [](Checkpoint& c) { c.set("qwen3moe.expert_used_count", gguf::Value::u32(5)); }},
      {"qwen3moe", "expert_used_count",
       [](Checkpoint& c) { c.set("qwen3moe.expert_used_count", gguf::Value::u32(0)); }},
      {"qwen3moe", "expert_count", [](Checkpoint& c) { c.set("qwen3moe.expert_count", gguf::Value::u32(0)); }},
      {"qwen3moe", "qwen3moe.expert_count",
       [](Checkpoint& c) { std::erase_if(c.meta, [](auto& kv) { return kv.first == "qwen3moe.expert_count"; }); }},
      {"qwen3moe", "blk.1.ffn_gate_exps.weight", [](Checkpoint& c) { c.remove("blk.1.ffn_gate_exps.weight"); }},
      {"qwen3moe", "blk.0.ffn_gate_inp.weight", [](Checkpoint& c) { c.remove("blk.0.ffn_gate_inp.weight"); }},
      {"qwen3moe", "blk.0.ffn_up_exps.weight",
       [](Checkpoint& c) {
         c.find("blk.0.ffn_up_exps.weight")->dims = {16, 8, 3};
       }},
      {"qwen3moe", "blk.0.ffn_down_exps.weight",
       [](Checkpoint& c) {
         c.find("blk.0.ffn_down_exps.weight")->dims = {16, 8, 4};
       }},
      {"qwen3moe", "blk.0.ffn_gate.weight",
       [](Checkpoint& c) {
         c.tensors.push_back({"blk.0.ffn_gate.weight", {16, 24}, ggml::Type::F16});
       }},
      {"qwen3moe", "value width", [](Checkpoint& c) { c.set("qwen3moe.attention.value_length", gguf::Value::u32(2)); }},
      {"gpt-oss", "blk.1.attn_sinks.weight", [](Checkpoint& c) { c.remove("blk.1.attn_sinks.weight"); }},
      {"gpt-oss", "blk.0.attn_sinks.weight", [](Checkpoint& c) { c.find("blk.0.attn_sinks.weight")->dims = {2}; }},
      {"gpt-oss", "blk.0.ffn_down_exps.bias", [](Checkpoint& c) { c.remove("blk.0.ffn_down_exps.bias"); }},
      {"gpt-oss", "blk.0.ffn_gate_inp.bias", [](Checkpoint& c) { c.remove("blk.0.ffn_gate_inp.bias"); }},
      {"gpt-oss", "blk.1.attn_output.bias", [](Checkpoint& c) { c.remove("blk.1.attn_output.bias"); }},
      {"gpt-oss", "output.weight", [](Checkpoint& c) { c.remove("output.weight"); }},
      {"gpt-oss", "sliding_window",
       [](Checkpoint& c) {
         std::erase_if(c.meta, [](auto& kv) { return kv.first == "gpt-oss.attention.sliding_window"; });
       }},
      {"gpt-oss", "expert_feed_forward_length",
       [](Checkpoint& c) {
         std::erase_if(c.meta, [](auto& kv) { return kv.first == "gpt-oss.expert_feed_forward_length"; });
       }},
      {"gpt-oss", "yarn_log_multiplier",
       [](Checkpoint& c) { c.set("gpt-oss.rope.scaling.yarn_log_multiplier", gguf::Value::f32(0.1f)); }},
      {"gpt-oss", "factor", [](Checkpoint& c) { c.set("gpt-oss.rope.scaling.factor", gguf::Value::f32(-2.f)); }},
      {"gpt-oss", "blk.0.post_attention_norm.weight",
       [](Checkpoint& c) { c.find("blk.0.post_attention_norm.weight")->type = ggml::Type::F16; }},
      {"qwen2moe", "expert_shared_feed_forward_length",
       [](Checkpoint& c) {
         std::erase_if(c.meta, [](auto& kv) { return kv.first.find("feed_forward_length") != std::string::npos; });
         c.set("qwen2moe.expert_feed_forward_length", gguf::Value::u32(8));
       }},
  };
  for (const Case& k : cases) {
    Checkpoint c = mixture(k.arch);
    k.spoil(c);
    const std::string e = refusal(c);
    EXPECT_NE(e.find(k.why), std::string::npos) << k.arch << " " << k.why << ": " << e;
  }
}

TEST(Model, MixtureDecodeReadsOnlyTheActiveExperts) {
  for (const char* arch : {"qwen3moe", "qwen2moe", "gpt-oss"}) {
    with_model(mixture(arch), [&](const model::Model& m, const gguf::File& f) {
      uint64_t all = 0, experts = 0;
      for (const auto& t : f.tensors()) {
        all += t.bytes;
        if (t.name.find("_exps.") != std::string::npos) experts += t.bytes;
      }
      EXPECT_EQ(m.weight_bytes(), all) << arch;
      // Two of four experts: half of every expert tensor; the untied embedding for one row.
      uint64_t one_row = ggml::row_bytes(m.token_embd->type, m.d_model);
      EXPECT_EQ(m.decode_bytes(), all - experts / 2 - m.token_embd->bytes + one_row) << arch;
    });
  }
}

// The lane runs every architecture the reference runs: the knob space (which a lane's schedule checks its knobs
// against) opens for gpt-oss (sinks, sliding windows, YaRN, the output bias) and for a dense model with YaRN.
TEST(Model, TheLaneTakesEveryArchitectureTheReferenceRuns) {
  with_model(mixture("gpt-oss"), [](const model::Model& m, const gguf::File&) {
    ASSERT_NE(m.layer[0].sinks, nullptr);
    EXPECT_NO_THROW(knobs::space(m, {132, 90}));
  });
  Checkpoint yarn = dense("qwen3");
  yarn.set("qwen3.rope.scaling.type", gguf::Value::str("yarn"));
  yarn.set("qwen3.rope.scaling.factor", gguf::Value::f32(4.f));
  with_model(yarn, [](const model::Model& m, const gguf::File&) {
    ASSERT_EQ(m.scaling.kind, model::RopeScaling::Kind::Yarn);
    EXPECT_NO_THROW(knobs::space(m, {132, 90}));
  });
}

// A hyperparameter that no model has (a NaN or negative epsilon, a rope base of 0 or infinity) is refused by name:
// the reference would otherwise print tokens from NaN sums.
TEST(Model, ImpossibleHyperparametersAreRefused) {
  for (float eps : {std::nanf(""), -1e-6f, INFINITY, 2.f}) {
    Checkpoint c = dense("llama");
    c.set("llama.attention.layer_norm_rms_epsilon", gguf::Value::f32(eps));
    EXPECT_NE(refusal(c).find("layer_norm_rms_epsilon"), std::string::npos) << eps;
  }
  for (float base : {0.f, 1.f, std::nanf(""), INFINITY}) {
    Checkpoint c = dense("qwen3");
    c.set("qwen3.rope.freq_base", gguf::Value::f32(base));
    EXPECT_NE(refusal(c).find("freq_base"), std::string::npos) << base;
  }
}

TEST(Model, MissingTensorIsNamed) {
  Checkpoint c = dense("llama");
  c.remove("blk.1.ffn_up.weight");
  EXPECT_NE(refusal(c).find("blk.1.ffn_up.weight"), std::string::npos);
}

TEST(Model, MissingKeyIsNamed) {
  Checkpoint c = dense("llama");
  std::erase_if(c.meta, [](const auto& kv) { return kv.first == "llama.block_count"; });
  EXPECT_NE(refusal(c).find("llama.block_count"), std::string::npos);
}

TEST(Model, WrongShapeIsNamed) {
  Checkpoint c = dense("llama");
  c.find("blk.0.attn_k.weight")->dims = {16, 16};
  std::string e = refusal(c);
  EXPECT_NE(e.find("blk.0.attn_k.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("[16, 8]"), std::string::npos) << e;
}

TEST(Model, WrongTypeIsNamed) {
  Checkpoint c = dense("llama");
  c.find("blk.0.attn_norm.weight")->type = ggml::Type::F16;
  std::string e = refusal(c);
  EXPECT_NE(e.find("blk.0.attn_norm.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("f16"), std::string::npos) << e;
}

TEST(Model, UnexpectedTensorIsNamed) {
  Checkpoint c = dense("qwen3");
  c.tensors.push_back({"blk.0.attn_q.bias", {16}});
  EXPECT_NE(refusal(c).find("blk.0.attn_q.bias"), std::string::npos);
}

TEST(Model, UnequalGroupsAreRefused) {
  Checkpoint c = dense("llama");
  c.set("llama.attention.head_count_kv", gguf::Value::u32(3));
  EXPECT_NE(refusal(c).find("key/value heads"), std::string::npos);
}

TEST(Model, PlainRopeFrequencies) {
  with_model(dense("qwen2"), [](const model::Model& m, const gguf::File&) {
    auto f = m.rope_inv_freq();
    ASSERT_EQ(f.size(), 2u);
    EXPECT_DOUBLE_EQ(f[0], 1.0);
    EXPECT_NEAR(f[1], std::pow(500000.0, -0.5), 1e-15);
  });
}

TEST(Model, RopeFreqsTensorDividesTheFrequencies) {
  Checkpoint c = dense("llama");
  c.tensors.push_back({"rope_freqs.weight", {2}});  // written as 1.0: no change
  with_model(c, [](const model::Model& m, const gguf::File& f) {
    EXPECT_EQ(m.rope_freqs, f.tensor("rope_freqs.weight"));
    EXPECT_EQ(m.scaling.kind, model::RopeScaling::Kind::Llama3);
    model::Model scaled = m;
    scaled.rope_freq_factors = {2.f, 8.f};
    auto plain = m.rope_inv_freq(), inv = scaled.rope_inv_freq();
    EXPECT_DOUBLE_EQ(inv[0], plain[0] / 2);
    EXPECT_DOUBLE_EQ(inv[1], plain[1] / 8);
  });
}

TEST(Model, Llama3ScalingKeysGiveTheConvertersFactors) {
  Checkpoint c = dense("llama");
  // Head width 64 (one head over d_model 64 would do; widen keys instead): 32 frequencies spanning every regime.
  c.set("llama.attention.key_length", gguf::Value::u32(64));
  c.set("llama.rope.freq_base", gguf::Value::f32(500000.f));
  c.set("llama.rope.scaling.type", gguf::Value::str("llama3"));
  c.set("llama.rope.scaling.factor", gguf::Value::f32(32.f));
  c.set("llama.rope.scaling.low_freq_factor", gguf::Value::f32(1.f));
  c.set("llama.rope.scaling.high_freq_factor", gguf::Value::f32(4.f));
  c.set("llama.rope.scaling.original_context_length", gguf::Value::u32(8192));
  for (int i = 0; i < 2; ++i) {
    std::string b = "blk." + std::to_string(i) + ".";
    c.find(b + "attn_q.weight")->dims = {16, 256};
    c.find(b + "attn_k.weight")->dims = {16, 128};
  }
  with_model(c, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.scaling.kind, model::RopeScaling::Kind::Llama3);
    EXPECT_EQ(m.scaling.factor, 32.f);
    EXPECT_EQ(m.scaling.original_context, 8192u);
    auto f = m.rope_inv_freq();
    ASSERT_EQ(f.size(), 32u);
    int kept = 0, divided = 0, smoothed = 0;
    for (size_t i = 0; i < f.size(); ++i) {
      double plain = std::pow(500000.0, -2.0 * double(i) / 64), wavelen = 2 * M_PI / plain;
      if (wavelen < 8192 / 4.0) {
        EXPECT_DOUBLE_EQ(f[i], plain) << i;
        ++kept;
      } else if (wavelen > 8192) {
        EXPECT_DOUBLE_EQ(f[i], plain / 32) << i;
        ++divided;
      } else {
        double smooth = (8192 / wavelen - 1) / 3;
        EXPECT_NEAR(f[i], plain * ((1 - smooth) / 32 + smooth), 1e-12 * plain) << i;
        ++smoothed;
      }
    }
    EXPECT_GT(kept, 0);
    EXPECT_GT(divided, 0);
    EXPECT_GT(smoothed, 0);
  });
}

// gpt-oss's YaRN (head width 64, base 150000, factor 32 over 4096 positions): ggml_rope_yarn_corr_dims puts the ramp
// between pairs floor(8.09) = 8 and ceil(17.40) = 18; pairs up to 8 keep their frequency, pairs from 18 on are divided
// by the factor, those between blend the two linearly.
TEST(Model, YarnFrequenciesFollowGgml) {
  Checkpoint c = mixture("gpt-oss");
  c.set("gpt-oss.attention.key_length", gguf::Value::u32(64));
  c.set("gpt-oss.attention.value_length", gguf::Value::u32(64));
  c.set("gpt-oss.rope.freq_base", gguf::Value::f32(150000.f));
  for (int i = 0; i < 2; ++i) {
    std::string b = "blk." + std::to_string(i) + ".";
    c.find(b + "attn_q.weight")->dims = {16, 256};
    c.find(b + "attn_q.bias")->dims = {256};
    c.find(b + "attn_k.weight")->dims = {16, 128};
    c.find(b + "attn_k.bias")->dims = {128};
    c.find(b + "attn_v.weight")->dims = {16, 128};
    c.find(b + "attn_v.bias")->dims = {128};
    c.find(b + "attn_output.weight")->dims = {256, 16};
  }
  with_model(c, [](const model::Model& m, const gguf::File&) {
    auto f = m.rope_inv_freq();
    ASSERT_EQ(f.size(), 32u);
    for (size_t i = 0; i < f.size(); ++i) {
      const double plain = std::pow(150000.0, -2.0 * double(i) / 64);
      const double extrapolated = std::clamp(1.0 - (double(i) - 8) / 10, 0.0, 1.0);
      EXPECT_NEAR(f[i], plain * extrapolated + plain / 32 * (1 - extrapolated), 1e-12 * plain) << i;
    }
    EXPECT_DOUBLE_EQ(f[8], std::pow(150000.0, -16.0 / 64));
    EXPECT_DOUBLE_EQ(f[18], std::pow(150000.0, -36.0 / 64) / 32);
  });
  // Without YaRN, rope's cosine and sine are not scaled.
  with_model(dense("qwen3"),
             [](const model::Model& m, const gguf::File&) { EXPECT_EQ(m.rope_attention_factor(), 1.0); });
  // Its own beta keys move the ramp; the original context defaults to the trained one.
  Checkpoint betas = mixture("gpt-oss");
  betas.set("gpt-oss.rope.scaling.yarn_beta_fast", gguf::Value::f32(16.f));
  std::erase_if(betas.meta, [](auto& kv) { return kv.first == "gpt-oss.rope.scaling.original_context_length"; });
  with_model(betas, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.scaling.beta_fast, 16.f);
    EXPECT_EQ(m.scaling.original_context, 64u);
  });
}

TEST(Model, WeightAndDecodeBytes) {
  for (bool tied : {true, false}) {
    with_model(dense("qwen2", tied), [&](const model::Model& m, const gguf::File& f) {
      uint64_t all = 0;
      for (const auto& t : f.tensors()) all += t.bytes;
      EXPECT_EQ(m.weight_bytes(), all);
      uint64_t one_row = ggml::row_bytes(m.token_embd->type, m.d_model);
      EXPECT_EQ(m.decode_bytes(), tied ? all : all - m.token_embd->bytes + one_row);
    });
  }
}

TEST(Model, LaneTuneKeysCarryLlama3Scaling) {
  Checkpoint c = dense("llama");
  c.set("lane_tune.rope.scaling.type", gguf::Value::str("llama3"));
  c.set("lane_tune.rope.scaling.factor", gguf::Value::f32(8.f));
  c.set("lane_tune.rope.scaling.original_context_length", gguf::Value::u32(1024));
  with_model(c, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.scaling.kind, model::RopeScaling::Kind::Llama3);
    EXPECT_EQ(m.scaling.factor, 8.f);
    EXPECT_EQ(m.scaling.original_context, 1024u);
  });
}

TEST(Model, AFactorWithoutATypeIsLinearScaling) {
  Checkpoint c = dense("llama");
  c.set("llama.rope.scaling.factor", gguf::Value::f32(4.f));
  with_model(c, [](const model::Model& m, const gguf::File&) {
    EXPECT_EQ(m.scaling.kind, model::RopeScaling::Kind::Linear);
    auto f = m.rope_inv_freq();
    EXPECT_DOUBLE_EQ(f[0], 0.25);
    EXPECT_NEAR(f[1], std::pow(500000.0, -0.5) / 4, 1e-15);
  });
}

TEST(Model, SynthesizedLlamaFactorsAgreeWithTheScalingKeys) {
  TempDir dir;
  synth::Options o;
  o.preset = "tiny-llama";
  synth::write(o, dir / "m.gguf");
  auto file = gguf::File::open(dir / "m.gguf");
  model::Model m = model::recognize(file);
  ASSERT_NE(m.rope_freqs, nullptr);
  EXPECT_EQ(m.scaling.kind, model::RopeScaling::Kind::Llama3);
  model::Model from_keys = m;
  from_keys.rope_freqs = nullptr;
  from_keys.rope_freq_factors.clear();
  auto a = m.rope_inv_freq(), b = from_keys.rope_inv_freq();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6 * b[i]) << i;
}

// Preset `p`'s checkpoint, written into `dir` and opened.
gguf::File synthesized(const synth::Preset& p, const TempDir& dir) {
  synth::Options o;
  o.preset = p.name;
  synth::write(o, dir / "m.gguf");
  return gguf::File::open(dir / "m.gguf");
}

TEST(Model, EveryMixtureTinyPresetIsRecognized) {
  int seen = 0;
  for (const synth::Preset& p : synth::presets()) {
    if (p.name.rfind("tiny", 0) != 0 || p.experts == 0) continue;
    SCOPED_TRACE(p.name);
    TempDir dir;
    auto file = synthesized(p, dir);
    model::Model m = model::recognize(file);
    EXPECT_EQ(m.architecture, p.architecture);
    EXPECT_EQ(m.experts, p.experts);
    EXPECT_EQ(m.experts_used, p.experts_used);
    EXPECT_EQ(m.expert_ffn, p.expert_ffn);
    EXPECT_EQ(m.shared_ffn, p.shared_ffn);
    EXPECT_EQ(m.sliding_window, p.sliding_window);
    EXPECT_EQ(m.qkv_bias, p.qkv_bias);
    EXPECT_EQ(m.qk_norm, p.qk_norm);
    EXPECT_EQ(m.scaling.kind,
              p.rope_scale_factor > 0 ? model::RopeScaling::Kind::Yarn : model::RopeScaling::Kind::None);
    ++seen;
  }
  EXPECT_EQ(seen, 3);  // tiny-moe (qwen3moe), tiny-qwen2moe, tiny-gpt-oss
}

TEST(Model, EveryDenseTinyPresetIsRecognized) {
  for (const synth::Preset& p : synth::presets()) {
    if (p.name.rfind("tiny", 0) != 0 || p.experts > 0 || p.architecture == "gpt-oss") continue;
    SCOPED_TRACE(p.name);
    TempDir dir;
    auto file = synthesized(p, dir);
    model::Model m = model::recognize(file);
    EXPECT_EQ(m.architecture, p.architecture);
    EXPECT_EQ(m.layers, p.layers);
    EXPECT_EQ(m.d_model, p.d_model);
    EXPECT_EQ(m.heads, p.heads);
    EXPECT_EQ(m.kv_heads, p.kv_heads);
    EXPECT_EQ(m.head_dim, p.head_dim);
    EXPECT_EQ(m.ffn, p.ffn);
    EXPECT_EQ(m.vocab, p.vocab);
    EXPECT_EQ(m.tied_output, p.tied_output);
    EXPECT_EQ(m.qkv_bias, p.qkv_bias);
    EXPECT_EQ(m.qk_norm, p.qk_norm);
    EXPECT_EQ(m.norm_eps, p.norm_eps);
    EXPECT_EQ(m.rope_base, p.rope_base);
  }
}

}  // namespace
}  // namespace lt::test
