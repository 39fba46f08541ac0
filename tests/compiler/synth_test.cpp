// Synthesized checkpoints: llama.cpp's names, shapes and metadata, deterministic weights of sensible scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/synth.hpp"
#include "support/test_support.hpp"

namespace lt::synth {
namespace {

using test::TempDir;

std::vector<uint8_t> slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<float> values(const gguf::File& f, const std::string& name) {
  const gguf::TensorInfo* t = f.tensor(name);
  EXPECT_NE(t, nullptr) << name;
  std::vector<float> out(t->elements());
  ggml::dequantize(t->type, f.data(*t).data(), out);
  return out;
}

uint64_t key(const gguf::File& f, const std::string& k) {
  const gguf::Value* v = f.find(k);
  EXPECT_NE(v, nullptr) << k;
  return v ? v->as_uint() : 0;
}

TEST(Synth, TinyPresetsAreRealSmallModels) {
  TempDir dir;
  for (const std::string name :
       {"tiny-llama", "tiny-qwen2", "tiny-qwen3", "tiny-moe", "tiny-qwen2moe", "tiny-gpt-oss"}) {
    const Preset& p = preset(name);
    Options o;
    o.preset = name;
    uint64_t calls = 0;
    o.progress = [&](uint64_t done, uint64_t total) {
      ++calls;
      EXPECT_LE(done, total);
    };
    const auto path = dir / (name + ".gguf");
    const uint64_t size = write(o, path);
    EXPECT_GT(calls, 0u);
    EXPECT_LT(size, 8u << 20) << name;
    gguf::File f = gguf::File::open(path);
    EXPECT_EQ(f.size(), size);
    const std::string a = p.architecture;
    EXPECT_EQ(f.find("general.architecture")->as_string(), a);
    EXPECT_EQ(f.find("tokenizer.ggml.model")->as_string(), "none");
    EXPECT_EQ(key(f, "general.alignment"), 32u);
    EXPECT_EQ(key(f, a + ".vocab_size"), p.vocab);
    EXPECT_EQ(key(f, a + ".block_count"), p.layers);
    EXPECT_EQ(key(f, a + ".embedding_length"), p.d_model);
    EXPECT_EQ(key(f, a + ".feed_forward_length"), p.ffn);
    EXPECT_EQ(key(f, a + ".attention.head_count"), p.heads);
    EXPECT_EQ(key(f, a + ".attention.head_count_kv"), p.kv_heads);
    EXPECT_EQ(key(f, a + ".attention.key_length"), p.head_dim);
    EXPECT_EQ(key(f, a + ".context_length"), p.context);
    EXPECT_FLOAT_EQ(float(f.find(a + ".rope.freq_base")->as_float()), p.rope_base);
    EXPECT_FLOAT_EQ(float(f.find(a + ".attention.layer_norm_rms_epsilon")->as_float()), p.norm_eps);
    EXPECT_LE(p.vocab, 1000u);
    EXPECT_GE(p.vocab, 512u);

    // shapes as llama.cpp creates them (ggml order)
    EXPECT_EQ(f.tensor("token_embd.weight")->dims, (std::vector<uint64_t>{p.d_model, p.vocab}));
    EXPECT_EQ(f.tensor("blk.0.attn_q.weight")->dims,
              (std::vector<uint64_t>{p.d_model, uint64_t{p.heads} * p.head_dim}));
    EXPECT_EQ(f.tensor("blk.1.attn_k.weight")->dims,
              (std::vector<uint64_t>{p.d_model, uint64_t{p.kv_heads} * p.head_dim}));
    EXPECT_EQ(f.tensor("blk.1.attn_output.weight")->dims,
              (std::vector<uint64_t>{uint64_t{p.heads} * p.head_dim, p.d_model}));
    EXPECT_EQ(f.tensor("output.weight") == nullptr, p.tied_output);
    EXPECT_EQ(f.tensor("blk.0.attn_q.bias") != nullptr, p.qkv_bias);
    EXPECT_EQ(f.tensor("blk.0.attn_q_norm.weight") != nullptr, p.qk_norm);
    EXPECT_EQ(f.tensor("rope_freqs.weight") != nullptr, a == "llama");
    if (p.experts) {
      EXPECT_EQ(key(f, a + ".expert_count"), p.experts);
      EXPECT_EQ(key(f, a + ".expert_used_count"), p.experts_used);
      EXPECT_EQ(f.tensor("blk.0.ffn_gate_exps.weight")->dims,
                (std::vector<uint64_t>{p.d_model, p.expert_ffn, p.experts}));
      EXPECT_EQ(f.tensor("blk.0.ffn_down_exps.weight")->dims,
                (std::vector<uint64_t>{p.expert_ffn, p.d_model, p.experts}));
      EXPECT_EQ(f.tensor("blk.0.ffn_gate_inp.weight")->dims, (std::vector<uint64_t>{p.d_model, p.experts}));
      EXPECT_EQ(f.tensor("blk.0.ffn_gate.weight"), nullptr);
      EXPECT_EQ(f.tensor("blk.1.ffn_down_shexp.weight") != nullptr, p.shared_ffn > 0);
      if (p.shared_ffn) {
        EXPECT_EQ(key(f, a + ".expert_shared_feed_forward_length"), p.shared_ffn);
        EXPECT_EQ(f.tensor("blk.1.ffn_gate_inp_shexp.weight")->dims, (std::vector<uint64_t>{p.d_model}));
        EXPECT_EQ(f.tensor("blk.1.ffn_up_shexp.weight")->dims, (std::vector<uint64_t>{p.d_model, p.shared_ffn}));
        EXPECT_EQ(f.tensor("blk.1.ffn_down_shexp.weight")->dims, (std::vector<uint64_t>{p.shared_ffn, p.d_model}));
      }
    } else {
      EXPECT_EQ(f.tensor("blk.0.ffn_down.weight")->dims, (std::vector<uint64_t>{p.ffn, p.d_model}));
    }
    for (const auto& t : f.tensors()) {
      if (t.dims.size() == 1) {
        EXPECT_EQ(t.type, ggml::Type::F32) << t.name;
      }
      std::vector<float> v = values(f, t.name);
      for (float x : v) ASSERT_TRUE(std::isfinite(x)) << t.name;
    }
    // weights of about 1/sqrt(inputs), norms near one
    auto q = values(f, "blk.0.attn_q.weight");
    double ss = 0;
    for (float x : q) ss += double(x) * x;
    EXPECT_NEAR(std::sqrt(ss / q.size()) * std::sqrt(double(p.d_model)), 1.0, 0.05) << name;
    for (float x : values(f, "blk.0.attn_norm.weight")) EXPECT_NEAR(x, 1.f, 0.11f);
    for (float x : values(f, "output_norm.weight")) EXPECT_NEAR(x, 1.f, 0.11f);
  }
}

TEST(Synth, TinyLlamaCarriesLlama3RopeFactors) {
  TempDir dir;
  Options o;
  o.preset = "tiny-llama";
  write(o, dir / "l.gguf");
  gguf::File f = gguf::File::open(dir / "l.gguf");
  const Preset& p = preset("tiny-llama");
  auto factors = values(f, "rope_freqs.weight");
  ASSERT_EQ(factors.size(), p.head_dim / 2);
  EXPECT_EQ(factors.front(), 1.f);
  EXPECT_EQ(factors.back(), p.rope_scale_factor);
  for (size_t i = 1; i < factors.size(); ++i) EXPECT_GE(factors[i], factors[i - 1]);
  EXPECT_EQ(f.find("llama.rope.scaling.factor"), nullptr);  // llama.cpp would scale linearly on top
  EXPECT_FLOAT_EQ(float(f.find("lane_tune.rope.scaling.factor")->as_float()), p.rope_scale_factor);
  EXPECT_EQ(key(f, "llama.rope.dimension_count"), p.head_dim);
  EXPECT_NE(f.tensor("output.weight"), nullptr);
}

TEST(Synth, GptOssHasSinksBiasesAndYarn) {
  TempDir dir;
  Options o;
  o.preset = "tiny-gpt-oss";
  write(o, dir / "g.gguf");
  gguf::File f = gguf::File::open(dir / "g.gguf");
  const Preset& p = preset("tiny-gpt-oss");
  EXPECT_EQ(f.tensor("blk.0.attn_sinks.weight")->dims, (std::vector<uint64_t>{p.heads}));
  EXPECT_EQ(f.tensor("blk.0.attn_output.bias")->dims, (std::vector<uint64_t>{p.d_model}));
  EXPECT_EQ(f.tensor("blk.0.ffn_gate_inp.bias")->dims, (std::vector<uint64_t>{p.experts}));
  EXPECT_EQ(f.tensor("blk.0.ffn_up_exps.bias")->dims, (std::vector<uint64_t>{p.expert_ffn, p.experts}));
  EXPECT_EQ(f.tensor("blk.0.ffn_down_exps.bias")->dims, (std::vector<uint64_t>{p.d_model, p.experts}));
  EXPECT_NE(f.tensor("blk.0.post_attention_norm.weight"), nullptr);
  EXPECT_EQ(f.find("gpt-oss.rope.scaling.type")->as_string(), "yarn");
  EXPECT_EQ(key(f, "gpt-oss.attention.sliding_window"), p.sliding_window);
}

// --layers: a big model's shapes (its experts, widths, vocabulary) in its first N layers, the metadata saying so; more
// layers than the preset holds are refused.
TEST(Synth, LayersKeepsTheFirstLayersOfABigShape) {
  Options o;
  o.preset = "qwen3-30b-a3b";
  o.layers = 2;
  const std::vector<TensorPlan> t = plan(o);
  const Preset& p = preset("qwen3-30b-a3b");
  auto has = [&](const std::string& name) {
    return std::any_of(t.begin(), t.end(), [&](const TensorPlan& x) { return x.name == name; });
  };
  EXPECT_TRUE(has("blk.1.ffn_gate_exps.weight"));
  EXPECT_FALSE(has("blk.2.attn_q.weight"));
  const auto up =
      std::find_if(t.begin(), t.end(), [](const TensorPlan& x) { return x.name == "blk.0.ffn_up_exps.weight"; });
  ASSERT_NE(up, t.end());
  EXPECT_EQ(up->dims, (std::vector<uint64_t>{p.d_model, p.expert_ffn, p.experts}));
  o.preset = "tiny-moe";
  TempDir dir;
  o.layers = 1;
  write(o, dir / "m.gguf");
  EXPECT_EQ(key(gguf::File::open(dir / "m.gguf"), "qwen3moe.block_count"), 1u);
  o.layers = preset("tiny-moe").layers + 1;
  EXPECT_THROW(write(o, dir / "n.gguf"), Error);
}

TEST(Synth, SameSeedSameBytesOtherSeedOtherWeights) {
  TempDir dir;
  Options o;
  o.preset = "tiny-qwen2";
  o.seed = 42;
  write(o, dir / "a.gguf");
  write(o, dir / "b.gguf");
  o.seed = 43;
  write(o, dir / "c.gguf");
  auto a = slurp(dir / "a.gguf"), b = slurp(dir / "b.gguf"), c = slurp(dir / "c.gguf");
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
  EXPECT_EQ(gguf::File::open(dir / "a.gguf").digest(), gguf::File::open(dir / "c.gguf").digest());
}

TEST(Synth, TypesApplyToMatricesWithKQuantFallback) {
  TempDir dir;
  for (auto type : {ggml::Type::Q4_K, ggml::Type::Q6_K, ggml::Type::F16, ggml::Type::BF16, ggml::Type::F32}) {
    Options o;
    o.preset = "tiny-moe";
    o.type = type;
    write(o, dir / "m.gguf");
    gguf::File f = gguf::File::open(dir / "m.gguf");
    EXPECT_EQ(f.tensor("blk.0.attn_q.weight")->type, type);
    auto q = values(f, "blk.0.attn_q.weight");
    double ss = 0;
    for (float x : q) ss += double(x) * x;
    EXPECT_NEAR(std::sqrt(ss / q.size() * 256), 1.0, 0.1) << ggml::traits_of(type).name;
    EXPECT_EQ(f.tensor("blk.0.ffn_gate_inp.weight")->type, ggml::Type::F32);
    EXPECT_EQ(f.tensor("blk.0.ffn_norm.weight")->type, ggml::Type::F32);
  }
  // gpt-oss-20b's 2880-wide rows do not fit 256-element blocks: they fall back as llama.cpp's quantizer does (q4_k to
  // q5_0, q5_k to q5_1, q6_k to q8_0, iq4_xs to iq4_nl, q2_k and q3_k to q4_0)
  for (auto [type, fallback] : {std::pair{ggml::Type::Q4_K, ggml::Type::Q5_0},
                                {ggml::Type::Q5_K, ggml::Type::Q5_1},
                                {ggml::Type::Q6_K, ggml::Type::Q8_0},
                                {ggml::Type::IQ4_XS, ggml::Type::IQ4_NL},
                                {ggml::Type::Q2_K, ggml::Type::Q4_0},
                                {ggml::Type::Q3_K, ggml::Type::Q4_0}}) {
    Options o;
    o.preset = "gpt-oss-20b";
    o.type = type;
    for (const auto& t : plan(o)) {
      if (t.dims.size() == 1 || t.name.ends_with(".bias") || t.name.ends_with("ffn_gate_inp.weight")) continue;
      EXPECT_EQ(t.type, t.dims[0] % 256 == 0 ? type : fallback) << t.name;
    }
  }
}

// llama.cpp's Q4_K_M / Q5_K_M: the output (or a tied embedding) in q6_k, and attn_v and ffn_down in q6_k in the layers
// use_more_bits picks: the first and last eighth, and every third layer between from the eighth's third.
TEST(Synth, KMixesLayTheTypesOutAsLlamaCpp) {
  Options o;
  o.preset = "llama-3.1-8b";  // 32 layers: 0-3 and 28-31, then 6, 9, ..., 27
  o.type = ggml::Type::Q4_K;
  o.mixed = true;
  std::set<uint32_t> more;
  for (uint32_t l = 0; l < 32; ++l)
    if (l < 4 || l >= 28 || (l >= 4 && (l - 4) % 3 == 2)) more.insert(l);
  EXPECT_EQ(more.size(), 16u);
  size_t q6 = 0;
  for (const auto& t : plan(o)) {
    if (t.dims.size() == 1) continue;
    uint32_t layer = 0;
    const bool in_layer = std::sscanf(t.name.c_str(), "blk.%u.", &layer) == 1;
    const bool promoted = t.name == "output.weight" ||
                          (in_layer && more.count(layer) &&
                           (t.name.ends_with("attn_v.weight") || t.name.ends_with("ffn_down.weight")));
    EXPECT_EQ(t.type, promoted ? ggml::Type::Q6_K : ggml::Type::Q4_K) << t.name;
    q6 += t.type == ggml::Type::Q6_K;
  }
  EXPECT_EQ(q6, 2 * more.size() + 1);
  o.preset = "qwen3-0.6b";  // tied: the embedding is the output
  o.type = ggml::Type::Q5_K;
  for (const auto& t : plan(o)) {
    if (t.name == "token_embd.weight") {
      EXPECT_EQ(t.type, ggml::Type::Q6_K);
    }
  }
  TempDir dir;
  o.preset = "tiny-qwen3";
  o.type = ggml::Type::Q6_K;
  EXPECT_THROW(write(o, dir / "m.gguf"), Error);  // only q4_k and q5_k mix
}

// Layout::Llama: the types llama.cpp's quantize tool (the version .llama/src.tar.xz holds) gives each matrix for a file
// type, as bench/llama_cpu_check.sh read them from its own output on these shapes: the output (or a tied embedding)
// in q6_k, attn_v / attn_k / attn_output / ffn_down by the type's rules, an mxfp4 file's dense matrices in q8_0.
TEST(Synth, LlamaLayoutIsLlamaCppsQuantizeTool) {
  using T = ggml::Type;
  // The type of each named matrix (layer 0 unless named), in `o`'s plan.
  auto types = [](Options o) {
    o.layout = Layout::Llama;
    std::map<std::string, T> m;
    for (const auto& t : plan(o)) m[t.name] = t.type;
    return m;
  };
  Options o;
  o.preset = "llama-3.1-8b";  // 32 layers, 4 query heads a key/value head, an output of its own
  o.type = T::Q4_0;
  auto m = types(o);
  EXPECT_EQ(m["output.weight"], T::Q6_K);
  EXPECT_EQ(m["token_embd.weight"], T::Q4_0);
  for (const auto& [name, type] : m) {
    if (name.starts_with("blk.") && type != T::F32) {  // (the norms)
      EXPECT_EQ(type, T::Q4_0) << name;
    }
  }
  o.type = T::Q2_K;  // attn_v q4_k (grouped by 4), attn_output and ffn_down q3_k
  m = types(o);
  EXPECT_EQ(m["blk.7.attn_v.weight"], T::Q4_K);
  EXPECT_EQ(m["blk.7.attn_output.weight"], T::Q3_K);
  EXPECT_EQ(m["blk.7.ffn_down.weight"], T::Q3_K);
  EXPECT_EQ(m["blk.7.attn_q.weight"], T::Q2_K);
  EXPECT_EQ(m["output.weight"], T::Q6_K);
  o.type = T::Q4_K;  // Q4_K_S: attn_v q5_k in the first 4 layers, ffn_down in the first 4 (32 / 8)
  m = types(o);
  EXPECT_EQ(m["blk.3.attn_v.weight"], T::Q5_K);
  EXPECT_EQ(m["blk.4.attn_v.weight"], T::Q4_K);
  EXPECT_EQ(m["blk.3.ffn_down.weight"], T::Q5_K);
  EXPECT_EQ(m["blk.4.ffn_down.weight"], T::Q4_K);
  o.type = T::IQ4_XS;  // attn_v q5_k (grouped by 4), ffn_down q5_k in the first eighth
  m = types(o);
  EXPECT_EQ(m["blk.20.attn_v.weight"], T::Q5_K);
  EXPECT_EQ(m["blk.3.ffn_down.weight"], T::Q5_K);
  EXPECT_EQ(m["blk.4.ffn_down.weight"], T::IQ4_XS);
  EXPECT_EQ(m["output.weight"], T::Q6_K);
  o.type = T::MXFP4;  // MXFP4_MOE on a dense model: no experts, every matrix q8_0
  for (const auto& [name, type] : types(o)) EXPECT_TRUE(type == T::Q8_0 || type == T::F32) << name;
  o.type = T::Q8_0;  // nothing moves
  for (const auto& [name, type] : types(o)) EXPECT_TRUE(type == T::Q8_0 || type == T::F32) << name;

  o.preset = "qwen3-0.6b";  // tied: the embedding is the output
  o.type = T::Q4_0;
  EXPECT_EQ(types(o)["token_embd.weight"], T::Q6_K);
  o.preset = "tiny-moe";  // 8 experts: attn_v and attn_k q8_0, attn_output q5_k under the low-bit types
  o.type = T::Q4_K;
  m = types(o);
  EXPECT_EQ(m["blk.0.attn_v.weight"], T::Q8_0);
  EXPECT_EQ(m["blk.0.attn_k.weight"], T::Q8_0);
  EXPECT_EQ(m["blk.0.attn_output.weight"], T::Q5_K);
  EXPECT_EQ(m["blk.0.ffn_gate_exps.weight"], T::Q4_K);
  EXPECT_EQ(m["blk.0.ffn_gate_inp.weight"], T::F32);
  o.type = T::Q6_K;
  EXPECT_EQ(types(o)["blk.0.attn_output.weight"], T::Q6_K);
  o.preset = "gpt-oss-20b";  // MXFP4_MOE: the experts mxfp4, the rest (and the output) q8_0
  o.type = T::MXFP4;
  m = types(o);
  EXPECT_EQ(m["blk.0.ffn_up_exps.weight"], T::MXFP4);
  EXPECT_EQ(m["blk.0.ffn_down_exps.weight"], T::MXFP4);
  EXPECT_EQ(m["blk.0.attn_q.weight"], T::Q8_0);
  EXPECT_EQ(m["output.weight"], T::Q8_0);
  EXPECT_EQ(m["token_embd.weight"], T::Q8_0);
  o.type = T::Q4_K;  // 2880-wide rows: the output q8_0 (q6_k does not fit), the rest falls back to q5_0
  m = types(o);
  EXPECT_EQ(m["output.weight"], T::Q8_0);
  EXPECT_EQ(m["blk.0.attn_q.weight"], T::Q5_0);
  // A 70B (80 layers of llama with grouped heads): Q4_K_S's attn_v q5_k in every layer; 79 layers: not a 70B.
  Preset big = preset("tiny-llama");
  big.layers = 80;
  big.heads = 8;
  big.kv_heads = 1;
  big.head_dim = 32;
  o.shape = big;
  o.type = T::Q4_K;
  EXPECT_EQ(types(o)["blk.40.attn_v.weight"], T::Q5_K);
  big.layers = 79;
  o.shape = big;
  EXPECT_EQ(types(o)["blk.40.attn_v.weight"], T::Q4_K);
  // Pure (the library's default, `--pure`): every matrix the type.
  o.shape.reset();
  o.preset = "llama-3.1-8b";
  o.type = T::Q2_K;
  o.layout = Layout::Pure;
  for (const auto& t : plan(o)) EXPECT_TRUE(t.type == T::Q2_K || t.type == T::F32) << t.name;
}

// quantize reads what llama.cpp's rules ask of the model from the file's metadata: its layers (a 70B: 80 of grouped
// llama), query heads a key/value head, experts.
TEST(Quantize, LaysTheTypeOutByTheFilesModel) {
  TempDir dir;
  Preset big = preset("tiny-llama");
  big.layers = 80, big.heads = 8, big.kv_heads = 1, big.head_dim = 32, big.ffn = 256, big.vocab = 256;
  Options src;
  src.shape = big;
  src.preset = "big";
  src.type = ggml::Type::F16;
  write(src, dir / "big.gguf");
  src.shape.reset();
  src.preset = "tiny-moe";
  write(src, dir / "moe.gguf");
  QuantizeOptions q;
  q.type = {ggml::Type::Q4_K, false, Layout::Llama};
  quantize(gguf::File::open(dir / "big.gguf"), dir / "big-q4k.gguf", q);
  quantize(gguf::File::open(dir / "moe.gguf"), dir / "moe-q4k.gguf", q);
  const gguf::File b = gguf::File::open(dir / "big-q4k.gguf"), m = gguf::File::open(dir / "moe-q4k.gguf");
  EXPECT_EQ(b.tensor("blk.40.attn_v.weight")->type, ggml::Type::Q5_K);  // (a 70B's q4_k attn_v)
  EXPECT_EQ(b.tensor("blk.40.ffn_down.weight")->type, ggml::Type::Q4_K);
  EXPECT_EQ(b.tensor("blk.9.ffn_down.weight")->type, ggml::Type::Q5_K);  // (Q4_K_S: the first eighth of 80)
  EXPECT_EQ(b.tensor("output.weight")->type, ggml::Type::Q6_K);
  EXPECT_EQ(m.tensor("blk.1.attn_k.weight")->type, ggml::Type::Q8_0);  // (8 experts)
  EXPECT_EQ(m.tensor("blk.1.attn_output.weight")->type, ggml::Type::Q5_K);
}

// quantize: a checkpoint's matrices requantized as llama.cpp's quantize tool lays the type out, the types tensor by
// tensor those synth plans for the same preset (mixes, tied embeddings, 32-element fallbacks, a MoE's router kept),
// the values those of the source within the format's error, vectors byte for byte, the metadata the source's but
// general.file_type, and the same bytes every time.
TEST(Quantize, RequantizesAsLlamaCppLaysOutTheType) {
  TempDir dir;
  struct Case {
    const char* preset;
    const char* type;
    double bound;  // relative L2 of a matrix's values against the f16 source's
    Layout layout = Layout::Pure;
  };
  for (const Case& c :
       {Case{"tiny-llama", "q4_k_m", 0.12}, Case{"tiny-qwen3", "q5_k_m", 0.06}, Case{"tiny-qwen2", "q4_0", 0.15},
        Case{"tiny-qwen3", "iq4_xs", 0.12}, Case{"tiny-moe", "q8_0", 0.01}, Case{"tiny-gpt-oss", "q4_k", 0.12},
        Case{"tiny-llama", "mxfp4", 0.2}, Case{"tiny-qwen2", "q4_0", 0.15, Layout::Llama},
        Case{"tiny-moe", "q2_k", 0.4, Layout::Llama}, Case{"tiny-gpt-oss", "mxfp4", 0.2, Layout::Llama}}) {
    Options src;
    src.preset = c.preset;
    src.type = ggml::Type::F16;
    src.seed = 2;
    const auto f16_path = dir / (std::string(c.preset) + "-f16.gguf");
    write(src, f16_path);
    const gguf::File in = gguf::File::open(f16_path);
    auto type = parse_matrix_type(c.type);
    ASSERT_TRUE(type) << c.type;
    type->layout = c.layout;
    QuantizeOptions q;
    q.type = *type;
    const auto out_path = dir / (std::string(c.preset) + "-" + c.type + ".gguf");
    quantize(in, out_path, q);
    const gguf::File out = gguf::File::open(out_path);
    Options planned = src;
    planned.type = type->type;
    planned.mixed = type->mixed;
    planned.layout = type->layout;
    const auto want = plan(planned);
    ASSERT_EQ(out.tensors().size(), want.size()) << c.preset;
    for (size_t i = 0; i < want.size(); ++i) {
      const gguf::TensorInfo& t = out.tensors()[i];
      EXPECT_EQ(t.name, want[i].name);
      EXPECT_EQ(t.dims, want[i].dims) << t.name;
      EXPECT_EQ(t.type, want[i].type) << c.preset << " " << c.type << " " << t.name;
      const gguf::TensorInfo& s = *in.tensor(t.name);
      if (t.type == s.type) {  // vectors, the router: the source's bytes
        const auto a = in.data(s), b = out.data(t);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << t.name;
        continue;
      }
      const std::vector<float> x = values(in, t.name), y = values(out, t.name);
      double num = 0, den = 0;
      for (size_t e = 0; e < x.size(); ++e) {
        num += (double(x[e]) - y[e]) * (double(x[e]) - y[e]);
        den += double(x[e]) * x[e];
      }
      EXPECT_LT(std::sqrt(num / den), c.bound) << c.preset << " " << c.type << " " << t.name;
    }
    for (const auto& [k, v] : in.metadata())
      if (k != "general.file_type") {
        ASSERT_NE(out.find(k), nullptr) << k;
        EXPECT_EQ(*out.find(k), v) << k;
      }
    Options same = planned;
    const auto synth_path = dir / "synth.gguf";
    write(same, synth_path);
    EXPECT_EQ(key(out, "general.file_type"), key(gguf::File::open(synth_path), "general.file_type")) << c.type;
    const auto again = dir / "again.gguf";
    quantize(in, again, q);
    EXPECT_EQ(slurp(again), slurp(out_path)) << "deterministic";
  }
  // From a quantized source too (its values dequantized first), and refusals that name the problem.
  Options src;
  src.preset = "tiny-qwen3";
  write(src, dir / "q8.gguf");
  const gguf::File q8 = gguf::File::open(dir / "q8.gguf");
  QuantizeOptions q;
  q.type = *parse_matrix_type("Q4_K_M");
  EXPECT_GT(quantize(q8, dir / "q8-q4km.gguf", q), 0u);
  EXPECT_EQ(gguf::File::open(dir / "q8-q4km.gguf").tensor("blk.0.attn_q.weight")->type, ggml::Type::Q4_K);
  q.type = {ggml::Type::Q6_K, true};
  EXPECT_THROW(quantize(q8, dir / "bad.gguf", q), Error);
  EXPECT_FALSE(parse_matrix_type("q7_k"));
  EXPECT_EQ(parse_matrix_type("Q4_K_S")->type, ggml::Type::Q4_K);  // llama.cpp's name of the unmixed file type
  EXPECT_FALSE(parse_matrix_type("q4_k_s")->mixed);
  EXPECT_FALSE(parse_matrix_type("q6_k_s"));
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.gguf"));
}

TEST(Synth, RealPresetsHaveTheirModelsShapes) {
  std::set<std::string> names;
  for (const auto& p : presets()) names.insert(p.name);
  for (const char* n : {"tiny-llama", "tiny-qwen2", "tiny-qwen3", "tiny-moe", "qwen3-0.6b", "qwen3-8b", "llama-3.2-1b",
                        "llama-3.1-8b", "qwen2.5-7b", "qwen3-30b-a3b", "gpt-oss-20b"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_THROW(preset("gpt-5"), Error);
  auto params = [](const std::string& name) {
    Options o;
    o.preset = name;
    o.type = ggml::Type::F32;
    uint64_t n = 0;
    bool has_output = false;
    for (const auto& t : plan(o)) {
      uint64_t e = 1;
      for (auto d : t.dims) e *= d;
      n += e;
      has_output |= t.name == "output.weight";
    }
    return std::pair{n, has_output};
  };
  // published parameter counts, to within a percent
  auto near = [](uint64_t n, double want) { return std::fabs(double(n) / want - 1) < 0.01; };
  EXPECT_TRUE(near(params("qwen3-0.6b").first, 596e6)) << params("qwen3-0.6b").first;
  EXPECT_FALSE(params("qwen3-0.6b").second);
  EXPECT_TRUE(near(params("llama-3.2-1b").first, 1.236e9)) << params("llama-3.2-1b").first;
  EXPECT_FALSE(params("llama-3.2-1b").second);
  EXPECT_TRUE(near(params("llama-3.1-8b").first, 8.03e9)) << params("llama-3.1-8b").first;
  EXPECT_TRUE(params("llama-3.1-8b").second);
  EXPECT_TRUE(near(params("qwen3-8b").first, 8.19e9)) << params("qwen3-8b").first;
  EXPECT_TRUE(near(params("qwen2.5-7b").first, 7.62e9)) << params("qwen2.5-7b").first;
  EXPECT_TRUE(near(params("qwen3-30b-a3b").first, 30.5e9)) << params("qwen3-30b-a3b").first;
  EXPECT_TRUE(near(params("gpt-oss-20b").first, 20.9e9)) << params("gpt-oss-20b").first;
}

}  // namespace
}  // namespace lt::synth
