// The CPU reference: against a plain forward pass written here (transformers' way: no cache, llama's q/k rows
// un-permuted and rotated by halves), its invariants, every tiny preset, and `lane-tune reference`.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/model.hpp"
#include "compiler/reference.hpp"
#include "compiler/synth.hpp"
#include "support/test_support.hpp"

namespace lt::test {
namespace {

// The shape of a small random-weight checkpoint (f32 weights).
struct Shape {
  std::string arch = "llama";
  uint32_t layers = 1, d = 16, heads = 4, kv_heads = 2, head_dim = 4, value_dim = 4, ffn = 24, vocab = 40;
  bool explicit_widths = false;  // write key_length/value_length
  bool tied = false;
  bool output_is_embedding = false;  // untied, but output.weight holds the embedding's values
  bool rope_freqs = false;
  float rope_base = 10000.f, eps = 1e-5f;
  uint64_t seed = 7;
};

// A checkpoint's weights as written: name -> (ggml dims, values).
using Weights = std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<float>>>;

// Writes a random-weight checkpoint of `s` to `path` and returns its weights.
Weights write_checkpoint(const Shape& s, const std::filesystem::path& path) {
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::pair<std::string, std::vector<uint64_t>>> order;
  Weights w;
  auto add = [&](const std::string& name, std::vector<uint64_t> dims, float scale, float offset) {
    uint64_t n = 1;
    for (uint64_t x : dims) n *= x;
    std::vector<float> v(n);
    for (float& x : v) x = offset + scale * u(rng);
    w[name] = {dims, v};
    order.emplace_back(name, dims);
  };
  const uint64_t d = s.d, q = s.heads * s.head_dim, k = s.kv_heads * s.head_dim, v = s.kv_heads * s.value_dim;
  add("token_embd.weight", {d, s.vocab}, 1.f, 0.f);
  add("output_norm.weight", {d}, 0.2f, 1.f);
  if (s.output_is_embedding) {
    w["output.weight"] = w["token_embd.weight"];
    order.emplace_back("output.weight", std::vector<uint64_t>{d, s.vocab});
  } else if (!s.tied) {
    add("output.weight", {d, s.vocab}, 0.5f, 0.f);
  }
  if (s.rope_freqs) add("rope_freqs.weight", {s.head_dim / 2}, 1.5f, 2.5f);
  for (uint32_t i = 0; i < s.layers; ++i) {
    std::string b = "blk." + std::to_string(i) + ".";
    add(b + "attn_norm.weight", {d}, 0.2f, 1.f);
    add(b + "attn_q.weight", {d, q}, 0.5f, 0.f);
    add(b + "attn_k.weight", {d, k}, 0.5f, 0.f);
    add(b + "attn_v.weight", {d, v}, 0.5f, 0.f);
    if (s.arch == "qwen2") {
      add(b + "attn_q.bias", {q}, 0.3f, 0.f);
      add(b + "attn_k.bias", {k}, 0.3f, 0.f);
      add(b + "attn_v.bias", {v}, 0.3f, 0.f);
    }
    if (s.arch == "qwen3") {
      add(b + "attn_q_norm.weight", {s.head_dim}, 0.2f, 1.f);
      add(b + "attn_k_norm.weight", {s.head_dim}, 0.2f, 1.f);
    }
    add(b + "attn_output.weight", {s.heads * s.value_dim, d}, 0.5f, 0.f);
    add(b + "ffn_norm.weight", {d}, 0.2f, 1.f);
    add(b + "ffn_gate.weight", {d, s.ffn}, 0.5f, 0.f);
    add(b + "ffn_up.weight", {d, s.ffn}, 0.5f, 0.f);
    add(b + "ffn_down.weight", {s.ffn, d}, 0.5f, 0.f);
  }

  gguf::Writer out(path);
  const std::string& a = s.arch;
  out.set("general.architecture", gguf::Value::str(a));
  out.set(a + ".block_count", gguf::Value::u32(s.layers));
  out.set(a + ".context_length", gguf::Value::u32(64));
  out.set(a + ".embedding_length", gguf::Value::u32(s.d));
  out.set(a + ".feed_forward_length", gguf::Value::u32(s.ffn));
  out.set(a + ".attention.head_count", gguf::Value::u32(s.heads));
  out.set(a + ".attention.head_count_kv", gguf::Value::u32(s.kv_heads));
  if (s.explicit_widths) {
    out.set(a + ".attention.key_length", gguf::Value::u32(s.head_dim));
    out.set(a + ".attention.value_length", gguf::Value::u32(s.value_dim));
  }
  out.set(a + ".rope.freq_base", gguf::Value::f32(s.rope_base));
  out.set(a + ".attention.layer_norm_rms_epsilon", gguf::Value::f32(s.eps));
  for (const auto& [name, dims] : order) out.add_tensor(name, dims, ggml::Type::F32);
  out.begin_data();
  for (const auto& [name, dims] : order) {
    const auto& values = w[name].second;
    out.write({reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)});
  }
  out.finish();
  return w;
}

// The plain forward pass: every position's logits for `tokens`, recomputed from scratch in f64.
class PlainForward {
 public:
  PlainForward(const Shape& s, const Weights& w) : s_(s), w_(w) {}

  std::vector<std::vector<double>> logits(const std::vector<int32_t>& tokens) const {
    const size_t n = tokens.size(), d = s_.d, hd = s_.head_dim, vd = s_.value_dim;
    std::vector<std::vector<double>> x(n);
    for (size_t t = 0; t < n; ++t) {
      const auto& e = values("token_embd.weight");
      x[t].assign(e.begin() + tokens[t] * d, e.begin() + (tokens[t] + 1) * d);
    }
    for (uint32_t l = 0; l < s_.layers; ++l) {
      std::string b = "blk." + std::to_string(l) + ".";
      std::vector<std::vector<double>> q(n), k(n), v(n);
      for (size_t t = 0; t < n; ++t) {
        auto h = norm(x[t], values(b + "attn_norm.weight"));
        q[t] = linear(b + "attn_q", h);
        k[t] = linear(b + "attn_k", h);
        v[t] = linear(b + "attn_v", h);
        if (s_.arch == "llama") {
          q[t] = unpermute(q[t], s_.heads);
          k[t] = unpermute(k[t], s_.kv_heads);
        }
        for (uint32_t h2 = 0; h2 < s_.heads; ++h2) head(q[t], h2, t, b + "attn_q_norm.weight");
        for (uint32_t h2 = 0; h2 < s_.kv_heads; ++h2) head(k[t], h2, t, b + "attn_k_norm.weight");
      }
      for (size_t t = 0; t < n; ++t) {
        std::vector<double> o(s_.heads * vd, 0.0);
        for (uint32_t h = 0; h < s_.heads; ++h) {
          const uint32_t g = h / (s_.heads / s_.kv_heads);
          std::vector<double> p(t + 1);
          double top = -1e300, sum = 0;
          for (size_t j = 0; j <= t; ++j) {
            double dot = 0;
            for (size_t i = 0; i < hd; ++i) dot += q[t][h * hd + i] * k[j][g * hd + i];
            p[j] = dot / std::sqrt(double(hd));
            top = std::max(top, p[j]);
          }
          for (double& e : p) sum += e = std::exp(e - top);
          for (size_t j = 0; j <= t; ++j)
            for (size_t i = 0; i < vd; ++i) o[h * vd + i] += p[j] / sum * v[j][g * vd + i];
        }
        auto attn = linear(b + "attn_output", o);
        for (size_t i = 0; i < d; ++i) x[t][i] += attn[i];
        auto h = norm(x[t], values(b + "ffn_norm.weight"));
        auto gate = linear(b + "ffn_gate", h), up = linear(b + "ffn_up", h);
        for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] * up[i] / (1 + std::exp(-gate[i]));
        auto down = linear(b + "ffn_down", gate);
        for (size_t i = 0; i < d; ++i) x[t][i] += down[i];
      }
    }
    std::vector<std::vector<double>> out(n);
    for (size_t t = 0; t < n; ++t)
      out[t] = linear(w_.count("output.weight") ? "output" : "token_embd", norm(x[t], values("output_norm.weight")));
    return out;
  }

 private:
  const std::vector<float>& values(const std::string& name) const { return w_.at(name).second; }

  // W x (+ b): W's ggml rows are its outputs.
  std::vector<double> linear(const std::string& name, const std::vector<double>& x) const {
    const auto& m = values(name + ".weight");
    std::vector<double> y(m.size() / x.size(), 0.0);
    for (size_t r = 0; r < y.size(); ++r)
      for (size_t i = 0; i < x.size(); ++i) y[r] += double(m[r * x.size() + i]) * x[i];
    if (auto it = w_.find(name + ".bias"); it != w_.end())
      for (size_t r = 0; r < y.size(); ++r) y[r] += it->second.second[r];
    return y;
  }

  std::vector<double> norm(std::vector<double> x, const std::vector<float>& w) const {
    double ms = 0;
    for (double e : x) ms += e * e / double(x.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] / std::sqrt(ms + double(s_.eps)) * w[i];
    return x;
  }

  // llama.cpp's converter interleaves each head's two halves; transformers' order has them apart.
  std::vector<double> unpermute(const std::vector<double>& x, uint32_t heads) const {
    const size_t hd = s_.head_dim, half = hd / 2;
    std::vector<double> y(x.size());
    for (size_t h = 0; h < heads; ++h)
      for (size_t i = 0; i < half; ++i)
        for (size_t side = 0; side < 2; ++side) y[h * hd + side * half + i] = x[h * hd + 2 * i + side];
    return y;
  }

  // One head: qwen3's norm, then rope by halves (transformers' rotate_half) at position `pos`.
  void head(std::vector<double>& x, size_t h, size_t pos, const std::string& norm_name) const {
    const size_t hd = s_.head_dim, half = hd / 2;
    std::vector<double> v(x.begin() + h * hd, x.begin() + (h + 1) * hd);
    if (w_.count(norm_name)) v = norm(v, values(norm_name));
    for (size_t i = 0; i < half; ++i) {
      double freq = std::pow(double(s_.rope_base), -double(2 * i) / double(hd));
      if (w_.count("rope_freqs.weight")) freq /= values("rope_freqs.weight")[i];
      double c = std::cos(double(pos) * freq), sn = std::sin(double(pos) * freq);
      x[h * hd + i] = v[i] * c - v[i + half] * sn;
      x[h * hd + i + half] = v[i + half] * c + v[i] * sn;
    }
  }

  Shape s_;
  const Weights& w_;
};

// Relative L2 distance between the reference's f32 logits and the plain pass's f64 ones.
double rel_l2(const float* a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

// A recognized checkpoint with its reference, written from a shape.
struct Fixture {
  TempDir dir;
  Weights weights;
  gguf::File file;
  model::Model model;
  explicit Fixture(const Shape& s)
      : weights(write_checkpoint(s, dir / "m.gguf")),
        file(gguf::File::open(dir / "m.gguf")),
        model(model::recognize(file)) {}
};

std::vector<Shape> one_layer_shapes() {
  Shape llama;
  llama.rope_freqs = true;
  Shape llama_tied;
  llama_tied.tied = true;
  llama_tied.kv_heads = 4;
  llama_tied.layers = 2;
  Shape qwen2;
  qwen2.arch = "qwen2";
  qwen2.rope_base = 1000000.f;
  qwen2.eps = 1e-6f;
  Shape qwen3;
  qwen3.arch = "qwen3";
  qwen3.explicit_widths = true;
  qwen3.head_dim = 8;
  qwen3.value_dim = 6;
  qwen3.kv_heads = 1;
  return {llama, llama_tied, qwen2, qwen3};
}

TEST(Reference, MatchesAPlainForwardPass) {
  for (const Shape& s : one_layer_shapes()) {
    SCOPED_TRACE(s.arch + (s.tied ? " tied" : ""));
    Fixture f(s);
    PlainForward plain(s, f.weights);
    reference::Reference ref(f.file, f.model, 2);
    const std::vector<int32_t> prompt = {3, 17, 0, 39, 8, 22};

    auto rows = ref.forward(prompt);
    EXPECT_EQ(ref.position(), 6);
    auto expected = plain.logits(prompt);
    ASSERT_EQ(rows.size(), prompt.size() * s.vocab);
    for (size_t t = 0; t < prompt.size(); ++t) EXPECT_LT(rel_l2(rows.data() + t * s.vocab, expected[t]), 2e-7) << t;

    const int n_gen = 4;
    auto g = ref.generate(prompt, n_gen);
    ASSERT_EQ(g.tokens.size(), size_t(n_gen));
    ASSERT_EQ(g.logits.size(), size_t(n_gen) * s.vocab);
    std::vector<int32_t> seq = prompt;
    for (int i = 0; i < n_gen; ++i) {
      auto last = plain.logits(seq).back();
      EXPECT_LT(rel_l2(g.logits.data() + i * s.vocab, last), 2e-7) << i;
      int32_t best = int32_t(std::max_element(last.begin(), last.end()) - last.begin());
      EXPECT_EQ(g.tokens[i], best) << i;
      seq.push_back(g.tokens[i]);
    }
  }
}

TEST(Reference, APrefixIgnoresLaterTokens) {
  Fixture f(one_layer_shapes()[3]);
  reference::Reference ref(f.file, f.model, 2);
  const std::vector<int32_t> prompt = {5, 1, 30, 2, 2, 9, 11};
  auto all = ref.forward(prompt);
  ref.reset();
  EXPECT_EQ(ref.position(), 0);
  auto prefix = ref.forward(std::span(prompt).first(3));
  EXPECT_EQ(prefix, std::vector<float>(all.begin(), all.begin() + 3 * f.model.vocab));
}

TEST(Reference, OneChunkEqualsTokenByToken) {
  for (const Shape& s : one_layer_shapes()) {
    Fixture f(s);
    reference::Reference ref(f.file, f.model, 2);
    const std::vector<int32_t> prompt = {5, 1, 30, 2, 2, 9, 11};
    auto chunk = ref.forward(prompt);
    ref.reset();
    std::vector<float> steps;
    for (int32_t t : prompt) {
      auto row = ref.forward(std::span(&t, 1));
      steps.insert(steps.end(), row.begin(), row.end());
    }
    EXPECT_EQ(chunk, steps) << s.arch;
  }
}

TEST(Reference, TiedEqualsUntiedWithTheSameMatrix) {
  Shape tied, untied;
  tied.tied = true;
  untied.output_is_embedding = true;
  Fixture a(tied), b(untied);
  EXPECT_TRUE(a.model.tied_output);
  EXPECT_FALSE(b.model.tied_output);
  const std::vector<int32_t> prompt = {4, 8, 15, 16, 23};
  auto ga = reference::Reference(a.file, a.model).generate(prompt, 5);
  auto gb = reference::Reference(b.file, b.model).generate(prompt, 5);
  EXPECT_EQ(ga.tokens, gb.tokens);
  EXPECT_EQ(ga.logits, gb.logits);
}

TEST(Reference, ThreadCountDoesNotChangeTheResult) {
  Shape s = one_layer_shapes()[2];
  s.layers = 2;
  Fixture f(s);
  const std::vector<int32_t> prompt = {7, 7, 3, 1};
  auto one = reference::Reference(f.file, f.model, 1).generate(prompt, 6);
  auto many = reference::Reference(f.file, f.model, 5).generate(prompt, 6);
  EXPECT_EQ(one.tokens, many.tokens);
  EXPECT_EQ(one.logits, many.logits);
}

TEST(Reference, BadPromptsAreErrors) {
  Fixture f(Shape{});
  reference::Reference ref(f.file, f.model, 1);
  EXPECT_THROW(ref.forward(std::vector<int32_t>{}), Error);
  EXPECT_THROW(ref.forward(std::vector<int32_t>{40}), Error);
  EXPECT_THROW(ref.forward(std::vector<int32_t>{-1}), Error);
  EXPECT_THROW(ref.forward(std::vector<int32_t>(65, 1)), Error);
  EXPECT_EQ(ref.position(), 0);
}

TEST(Reference, EveryTinyPresetRunsAndStaysFinite) {
  int ran = 0;
  for (const synth::Preset& p : synth::presets()) {
    if (p.name.rfind("tiny", 0) != 0) continue;
    for (ggml::Type type : {ggml::Type::Q8_0, ggml::Type::F16}) {
      SCOPED_TRACE(p.name);
      TempDir dir;
      synth::Options o;
      o.preset = p.name;
      o.type = type;
      synth::write(o, dir / "m.gguf");
      auto file = gguf::File::open(dir / "m.gguf");
      model::Model m = model::recognize(file);
      auto g = reference::Reference(file, m).generate(std::vector<int32_t>{1, 2, 3, 4, 5}, 4);
      ASSERT_EQ(g.logits.size(), 4u * m.vocab);
      for (float x : g.logits) ASSERT_TRUE(std::isfinite(x));
      for (int32_t t : g.tokens) EXPECT_LT(uint32_t(t), m.vocab);
      ++ran;
    }
  }
  EXPECT_GE(ran, 12);  // the dense three and the mixtures (qwen3moe, qwen2moe, gpt-oss), in two types
}

// Prompts generated together (each step one chunk of every sequence still generating) give each prompt's generation
// alone, bit for bit: dense models and the mixtures (gpt-oss's sliding window and sinks among them), prompts of other
// lengths, one that generates nothing and one a single token, all in one group or in several; a bad prompt among them
// is an error.
TEST(Reference, PromptsGeneratedTogetherEqualEachAlone) {
  int ran = 0;
  for (const synth::Preset& p : synth::presets()) {
    if (p.name.rfind("tiny", 0) != 0) continue;
    SCOPED_TRACE(p.name);
    TempDir dir;
    synth::Options o;
    o.preset = p.name;
    synth::write(o, dir / "m.gguf");
    auto file = gguf::File::open(dir / "m.gguf");
    const model::Model m = model::recognize(file);
    std::vector<std::vector<int32_t>> prompts;
    for (int len : {9, 1, 4, 12}) {
      prompts.emplace_back();
      for (int i = 0; i < len; ++i) prompts.back().push_back((29 * i + 7 * len + 3) % int(m.vocab));
    }
    const std::vector<int> n_gen = {5, 3, 0, 1};
    std::vector<reference::Reference::Request> requests;
    for (size_t i = 0; i < prompts.size(); ++i) requests.push_back({prompts[i], n_gen[i]});
    reference::Reference together(file, m, 3), alone(file, m, 2);
    const auto got = together.generate(requests);
    ASSERT_EQ(got.size(), prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      const auto want = alone.generate(prompts[i], n_gen[i]);
      EXPECT_EQ(got[i].tokens, want.tokens) << "prompt " << i;
      EXPECT_EQ(got[i].logits, want.logits) << "prompt " << i;
      EXPECT_EQ(got[i].tokens.size(), size_t(n_gen[i]));
    }
    EXPECT_EQ(together.position(), 9 + 5 - 1);  // the first request's sequence
    // In groups whose caches hold at most 10 positions ({0}, {1, 2}, {3}): the same bits.
    const auto grouped = together.generate(requests, 10);
    for (size_t i = 0; i < prompts.size(); ++i) {
      EXPECT_EQ(grouped[i].tokens, got[i].tokens) << "prompt " << i;
      EXPECT_EQ(grouped[i].logits, got[i].logits) << "prompt " << i;
    }
    EXPECT_EQ(together.position(), 9 + 5 - 1);
    requests[1].prompt = std::span<const int32_t>();
    EXPECT_THROW(together.generate(requests), Error);
    ++ran;
  }
  EXPECT_GE(ran, 6);
}

TEST(Reference, CommandPrintsTokensAndWritesLogits) {
  Fixture f(one_layer_shapes()[2]);
  auto g = reference::Reference(f.file, f.model).generate(std::vector<int32_t>{9, 8, 7}, 3);
  Output r = run(cli() + " reference " + (f.dir / "m.gguf").string() + " --n-gen 3 --logits " +
                 (f.dir / "l.bin").string() + " 9 8 7");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "TOKENS: " + std::to_string(g.tokens[0]) + " " + std::to_string(g.tokens[1]) + " " +
                       std::to_string(g.tokens[2]) + "\n");
  std::ifstream in(f.dir / "l.bin", std::ios::binary);
  std::vector<float> logits(g.logits.size() + 1);
  in.read(reinterpret_cast<char*>(logits.data()), std::streamsize(logits.size() * sizeof(float)));
  EXPECT_EQ(size_t(in.gcount()), g.logits.size() * sizeof(float));
  logits.pop_back();
  EXPECT_EQ(logits, g.logits);

  Output bad = run(cli() + " reference " + (f.dir / "m.gguf").string() + " 99");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("token 99"), std::string::npos) << bad.out;
}

TEST(Reference, CommandRunsALanesPromptsFile) {
  Fixture f(one_layer_shapes()[3]);
  reference::Reference ref(f.file, f.model);
  auto a = ref.generate(std::vector<int32_t>{1, 2, 3}, 2);
  auto b = ref.generate(std::vector<int32_t>{30, 31, 32, 33, 34}, 4);
  std::ofstream(f.dir / "p.txt") << "2 1 2 3\n\n4 30 31 32 33 34\n";
  Output r = run(cli() + " reference " + (f.dir / "m.gguf").string() + " --prompts " + (f.dir / "p.txt").string() +
                 " --logits " + (f.dir / "l.bin").string());
  ASSERT_EQ(r.status, 0) << r.out;
  auto line = [](const std::vector<int32_t>& t) {
    std::string s = "TOKENS:";
    for (int32_t x : t) s += " " + std::to_string(x);
    return s + "\n";
  };
  EXPECT_EQ(r.out, line(a.tokens) + line(b.tokens));
  std::vector<float> expected = a.logits;
  expected.insert(expected.end(), b.logits.begin(), b.logits.end());
  std::ifstream in(f.dir / "l.bin", std::ios::binary);
  std::vector<float> logits(expected.size());
  in.read(reinterpret_cast<char*>(logits.data()), std::streamsize(logits.size() * sizeof(float)));
  EXPECT_EQ(logits, expected);
  EXPECT_EQ(in.peek(), std::char_traits<char>::eof());

  std::ofstream(f.dir / "bad.txt") << "2 1 x 3\n";
  Output bad = run(cli() + " reference " + (f.dir / "m.gguf").string() + " --prompts " + (f.dir / "bad.txt").string());
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("bad.txt:1"), std::string::npos) << bad.out;
  Output none = run(cli() + " reference " + (f.dir / "m.gguf").string());
  EXPECT_NE(none.status, 0);
}

}  // namespace
}  // namespace lt::test
