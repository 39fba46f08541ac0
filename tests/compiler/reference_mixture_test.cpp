// The CPU reference on mixtures of experts (qwen3moe, qwen2moe, gpt-oss): against a plain forward pass written here
// from the definitions (every expert computed, the selected ones combined; sinks, sliding windows, YaRN by ggml's
// formulas), the experts it must not read, its determinism over chunks and threads, sliding windows and sinks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/model.hpp"
#include "compiler/reference.hpp"
#include "compiler/synth.hpp"
#include "support/test_support.hpp"

namespace lt::test {
namespace {

// The shape of a small random-weight mixture (f32 weights, 4 query heads of 8 over 2 key/value heads).
struct Shape {
  std::string arch = "qwen3moe";  // or qwen2moe, gpt-oss
  uint32_t layers = 2, d = 16, heads = 4, kv_heads = 2, head_dim = 8, vocab = 40, context = 64;
  uint32_t experts = 4, used = 2, expert_ffn = 6, shared_ffn = 10, window = 4;
  float rope_base = 100.f, yarn_factor = 4.f;
  uint32_t yarn_context = 256;  // gpt-oss: the ramp then spans pairs 0 ... 4 of the 4
  uint64_t seed = 11;
  float sink = 0.f;          // gpt-oss's sinks: random when 0, else this logit for every head
  bool router_zero = false;  // every router logit 0 (router and its bias zero): experts 0 ... used - 1, by the tie rule
};

// A checkpoint's weights as written: name -> (ggml dims, values).
using Weights = std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<float>>>;

// Writes a random-weight mixture of `s` to `path` and returns its weights; `poison` may overwrite values first.
Weights write_mixture(const Shape& s, const std::filesystem::path& path,
                      const std::function<void(Weights&)>& poison = nullptr) {
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::string> order;
  Weights w;
  auto add = [&](const std::string& name, std::vector<uint64_t> dims, float scale, float offset) {
    uint64_t n = 1;
    for (uint64_t x : dims) n *= x;
    std::vector<float> v(n);
    for (float& x : v) x = offset + scale * u(rng);
    w[name] = {dims, v};
    order.push_back(name);
  };
  const bool gpt_oss = s.arch == "gpt-oss";
  const uint64_t d = s.d, q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim, e = s.experts, f = s.expert_ffn;
  add("token_embd.weight", {d, s.vocab}, 1.f, 0.f);
  add("output_norm.weight", {d}, 0.2f, 1.f);
  add("output.weight", {d, s.vocab}, 0.5f, 0.f);
  for (uint32_t i = 0; i < s.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    add(b + "attn_norm.weight", {d}, 0.2f, 1.f);
    add(b + "attn_q.weight", {d, q}, 0.5f, 0.f);
    add(b + "attn_k.weight", {d, kv}, 0.5f, 0.f);
    add(b + "attn_v.weight", {d, kv}, 0.5f, 0.f);
    add(b + "attn_output.weight", {q, d}, 0.5f, 0.f);
    if (s.arch == "qwen3moe") {
      add(b + "attn_q_norm.weight", {s.head_dim}, 0.2f, 1.f);
      add(b + "attn_k_norm.weight", {s.head_dim}, 0.2f, 1.f);
    } else {
      add(b + "attn_q.bias", {q}, 0.3f, 0.f);
      add(b + "attn_k.bias", {kv}, 0.3f, 0.f);
      add(b + "attn_v.bias", {kv}, 0.3f, 0.f);
    }
    if (gpt_oss) {
      add(b + "attn_output.bias", {d}, 0.3f, 0.f);
      add(b + "attn_sinks.weight", {s.heads}, s.sink == 0.f ? 1.f : 0.f, s.sink);
      add(b + "post_attention_norm.weight", {d}, 0.2f, 1.f);
    } else {
      add(b + "ffn_norm.weight", {d}, 0.2f, 1.f);
    }
    add(b + "ffn_gate_inp.weight", {d, e}, s.router_zero ? 0.f : 1.f, 0.f);
    add(b + "ffn_gate_exps.weight", {d, f, e}, 0.6f, 0.f);
    add(b + "ffn_up_exps.weight", {d, f, e}, 0.6f, 0.f);
    add(b + "ffn_down_exps.weight", {f, d, e}, 0.6f, 0.f);
    if (gpt_oss) {
      add(b + "ffn_gate_inp.bias", {e}, s.router_zero ? 0.f : 0.5f, 0.f);
      // Wide enough that the clamp at 7 acts on some of the gate and up sums.
      add(b + "ffn_gate_exps.bias", {f, e}, 6.f, 0.f);
      add(b + "ffn_up_exps.bias", {f, e}, 8.f, 0.f);
      add(b + "ffn_down_exps.bias", {d, e}, 0.3f, 0.f);
    }
    if (s.arch == "qwen2moe") {
      add(b + "ffn_gate_inp_shexp.weight", {d}, 1.f, 0.f);
      add(b + "ffn_gate_shexp.weight", {d, s.shared_ffn}, 0.5f, 0.f);
      add(b + "ffn_up_shexp.weight", {d, s.shared_ffn}, 0.5f, 0.f);
      add(b + "ffn_down_shexp.weight", {s.shared_ffn, d}, 0.5f, 0.f);
    }
  }
  if (poison) poison(w);

  gguf::Writer out(path);
  const std::string& a = s.arch;
  out.set("general.architecture", gguf::Value::str(a));
  out.set(a + ".block_count", gguf::Value::u32(s.layers));
  out.set(a + ".context_length", gguf::Value::u32(s.context));
  out.set(a + ".embedding_length", gguf::Value::u32(s.d));
  out.set(a + ".feed_forward_length", gguf::Value::u32(s.expert_ffn));
  out.set(a + ".attention.head_count", gguf::Value::u32(s.heads));
  out.set(a + ".attention.head_count_kv", gguf::Value::u32(s.kv_heads));
  out.set(a + ".attention.key_length", gguf::Value::u32(s.head_dim));
  out.set(a + ".attention.value_length", gguf::Value::u32(s.head_dim));
  out.set(a + ".rope.freq_base", gguf::Value::f32(s.rope_base));
  out.set(a + ".attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-5f));
  out.set(a + ".expert_count", gguf::Value::u32(s.experts));
  out.set(a + ".expert_used_count", gguf::Value::u32(s.used));
  out.set(a + ".expert_feed_forward_length", gguf::Value::u32(s.expert_ffn));
  if (a == "qwen2moe") out.set(a + ".expert_shared_feed_forward_length", gguf::Value::u32(s.shared_ffn));
  if (gpt_oss) {
    out.set(a + ".attention.sliding_window", gguf::Value::u32(s.window));
    out.set(a + ".rope.scaling.type", gguf::Value::str("yarn"));
    out.set(a + ".rope.scaling.factor", gguf::Value::f32(s.yarn_factor));
    out.set(a + ".rope.scaling.original_context_length", gguf::Value::u32(s.yarn_context));
  }
  for (const std::string& name : order) out.add_tensor(name, w[name].first, ggml::Type::F32);
  out.begin_data();
  for (const std::string& name : order) {
    const auto& values = w[name].second;
    out.write({reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)});
  }
  out.finish();
  return w;
}

using Vec = std::vector<double>;

// The plain forward pass: every position's logits for `tokens`, recomputed from scratch in f64, position by position,
// every expert of a layer computed for every position and the selected ones combined.
class PlainMixture {
 public:
  PlainMixture(const Shape& s, const Weights& w) : s_(s), w_(w) {}

  std::vector<Vec> logits(const std::vector<int32_t>& tokens) const {
    const size_t n = tokens.size(), d = s_.d, hd = s_.head_dim;
    const bool gpt_oss = s_.arch == "gpt-oss";
    std::vector<Vec> x(n);
    for (size_t t = 0; t < n; ++t) {
      const auto& e = values("token_embd.weight");
      x[t].assign(e.begin() + tokens[t] * d, e.begin() + (tokens[t] + 1) * d);
    }
    for (uint32_t l = 0; l < s_.layers; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      std::vector<Vec> q(n), k(n), v(n);
      for (size_t t = 0; t < n; ++t) {
        const Vec h = norm(x[t], values(b + "attn_norm.weight"));
        q[t] = linear(b + "attn_q", h);
        k[t] = linear(b + "attn_k", h);
        v[t] = linear(b + "attn_v", h);
        for (uint32_t i = 0; i < s_.heads; ++i) rotate(q[t], i, t, b + "attn_q_norm.weight");
        for (uint32_t i = 0; i < s_.kv_heads; ++i) rotate(k[t], i, t, b + "attn_k_norm.weight");
      }
      const bool sliding = gpt_oss && l % 2 == 0;
      for (size_t t = 0; t < n; ++t) {
        Vec o(s_.heads * hd, 0.0);
        for (uint32_t h = 0; h < s_.heads; ++h) {
          const uint32_t g = h / (s_.heads / s_.kv_heads);
          // The visible keys' logits, then the sink's: softmax over all, the sink's share dropped.
          std::vector<size_t> seen;
          Vec logit;
          for (size_t j = 0; j <= t; ++j) {
            if (sliding && t - j >= s_.window) continue;
            double dot = 0;
            for (size_t i = 0; i < hd; ++i) dot += q[t][h * hd + i] * k[j][g * hd + i];
            seen.push_back(j);
            logit.push_back(dot / std::sqrt(double(hd)));
          }
          if (gpt_oss) logit.push_back(values(b + "attn_sinks.weight")[h]);
          const Vec p = softmax(logit);
          for (size_t a = 0; a < seen.size(); ++a)
            for (size_t i = 0; i < hd; ++i) o[h * hd + i] += p[a] * v[seen[a]][g * hd + i];
        }
        const Vec out = linear(b + "attn_output", o);
        for (size_t i = 0; i < d; ++i) x[t][i] += out[i];
      }
      for (size_t t = 0; t < n; ++t) {
        const Vec h = norm(x[t], values(b + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight")));
        const Vec moe = mixture(b, h);
        for (size_t i = 0; i < d; ++i) x[t][i] += moe[i];
      }
    }
    std::vector<Vec> out(n);
    for (size_t t = 0; t < n; ++t) out[t] = linear("output", norm(x[t], values("output_norm.weight")));
    return out;
  }

 private:
  const std::vector<float>& values(const std::string& name) const { return w_.at(name).second; }
  bool has(const std::string& name) const { return w_.count(name) > 0; }

  // The mixture of one position's normed activations: every expert's output, the selected ones weighted and summed.
  Vec mixture(const std::string& b, const Vec& h) const {
    const size_t d = s_.d, f = s_.expert_ffn, experts = s_.experts;
    const bool gpt_oss = s_.arch == "gpt-oss";
    Vec logit = linear(b + "ffn_gate_inp", h);
    std::vector<Vec> expert_out(experts);
    for (size_t e = 0; e < experts; ++e) {
      Vec a(f);
      for (size_t r = 0; r < f; ++r) {
        double g = row(b + "ffn_gate_exps.weight", e * f + r, h), u = row(b + "ffn_up_exps.weight", e * f + r, h);
        if (gpt_oss) {
          g += values(b + "ffn_gate_exps.bias")[e * f + r];
          u += values(b + "ffn_up_exps.bias")[e * f + r];
          g = std::min(g, 7.0);
          u = std::max(-7.0, std::min(u, 7.0));
          a[r] = g * (1 / (1 + std::exp(-1.702f * g))) * (u + 1);
        } else {
          a[r] = g * (1 / (1 + std::exp(-g))) * u;
        }
      }
      expert_out[e].resize(d);
      for (size_t i = 0; i < d; ++i)
        expert_out[e][i] = row(b + "ffn_down_exps.weight", e * d + i, a) +
                           (gpt_oss ? values(b + "ffn_down_exps.bias")[e * d + i] : 0.0);
    }
    // Ranks: larger score first; stable_sort keeps the lower index first among equal scores.
    const Vec score = gpt_oss ? logit : softmax(logit);
    std::vector<size_t> rank(experts);
    std::iota(rank.begin(), rank.end(), 0);
    std::stable_sort(rank.begin(), rank.end(), [&](size_t a, size_t c) { return score[a] > score[c]; });
    rank.resize(s_.used);
    Vec weight;
    for (size_t e : rank) weight.push_back(score[e]);
    if (gpt_oss) weight = softmax(weight);
    if (s_.arch == "qwen3moe") {
      const double sum = std::accumulate(weight.begin(), weight.end(), 0.0);
      for (double& x : weight) x /= sum;
    }
    Vec out(d, 0.0);
    for (size_t a = 0; a < rank.size(); ++a)
      for (size_t i = 0; i < d; ++i) out[i] += weight[a] * expert_out[rank[a]][i];
    if (s_.arch == "qwen2moe") {
      const Vec g = linear(b + "ffn_gate_shexp", h), u = linear(b + "ffn_up_shexp", h);
      Vec a(g.size());
      for (size_t i = 0; i < g.size(); ++i) a[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
      const Vec down = linear(b + "ffn_down_shexp", a);
      const double gate = 1 / (1 + std::exp(-row(b + "ffn_gate_inp_shexp.weight", 0, h)));
      for (size_t i = 0; i < d; ++i) out[i] += gate * down[i];
    }
    return out;
  }

  static Vec softmax(const Vec& x) {
    const double top = *std::max_element(x.begin(), x.end());
    Vec p(x.size());
    double sum = 0;
    for (size_t i = 0; i < x.size(); ++i) sum += p[i] = std::exp(x[i] - top);
    for (double& y : p) y /= sum;
    return p;
  }

  Vec norm(const Vec& x, const std::vector<float>& g) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1 / std::sqrt(ss / double(x.size()) + 1e-5);
    Vec out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * inv * g[i];
    return out;
  }

  // Row r of a tensor whose rows are x.size() wide, dotted with x.
  double row(const std::string& name, size_t r, const Vec& x) const {
    const auto& w = values(name);
    double s = 0;
    for (size_t c = 0; c < x.size(); ++c) s += double(w[r * x.size() + c]) * x[c];
    return s;
  }

  Vec linear(const std::string& prefix, const Vec& x) const {
    const auto& [dims, w] = w_.at(prefix + ".weight");
    Vec y(dims.size() > 1 ? dims[1] : 1);
    for (size_t r = 0; r < y.size(); ++r) y[r] = row(prefix + ".weight", r, x);
    if (has(prefix + ".bias"))
      for (size_t r = 0; r < y.size(); ++r) y[r] += values(prefix + ".bias")[r];
    return y;
  }

  // Head `h` of x: its per-head norm where the checkpoint has one, then rope by halves (NeoX) at position `pos`; for
  // gpt-oss with ggml's YaRN: each pair's angle blended from pos * base^(-2i/d) and that over the factor by ggml's
  // ramp, cosine and sine scaled by 1 + 0.1 ln(factor).
  void rotate(Vec& x, uint32_t h, size_t pos, const std::string& norm_name) const {
    const size_t hd = s_.head_dim, half = hd / 2;
    double* v = x.data() + h * hd;
    if (has(norm_name)) {
      Vec head(v, v + hd);
      head = norm(head, values(norm_name));
      std::copy(head.begin(), head.end(), v);
    }
    double low = 0, high = 0, mscale = 1;
    if (s_.arch == "gpt-oss") {
      auto corr = [&](double rotations) {
        return double(hd) * std::log(s_.yarn_context / (rotations * 2 * M_PI)) / (2 * std::log(double(s_.rope_base)));
      };
      low = std::max(0.0, std::floor(corr(32)));
      high = std::min(double(hd - 1), std::ceil(corr(1)));
      mscale = 1 + 0.1 * std::log(double(s_.yarn_factor));
    }
    for (size_t i = 0; i < half; ++i) {
      const double extrap = double(pos) * std::pow(double(s_.rope_base), -2.0 * double(i) / double(hd));
      double theta = extrap;
      if (s_.arch == "gpt-oss") {
        const double y = (double(i) - low) / std::max(0.001, high - low);
        const double mix = 1 - std::min(1.0, std::max(0.0, y));
        theta = extrap / s_.yarn_factor * (1 - mix) + extrap * mix;
      }
      const double c = std::cos(theta) * mscale, s = std::sin(theta) * mscale, a = v[i], b = v[i + half];
      v[i] = a * c - b * s;
      v[i + half] = a * s + b * c;
    }
  }

  Shape s_;
  const Weights& w_;
};

// A written mixture, recognized, with the plain pass over its weights.
struct Fixture {
  TempDir dir;
  Shape shape;
  Weights weights;
  gguf::File file;
  model::Model model;

  explicit Fixture(const Shape& s, const std::function<void(Weights&)>& poison = nullptr)
      : shape(s),
        weights(write_mixture(s, dir / "m.gguf", poison)),
        file(gguf::File::open(dir / "m.gguf")),
        model(model::recognize(file)) {}
};

// The largest |a - b| over the rows, relative to the largest |b|.
double worst(const std::vector<float>& got, const std::vector<Vec>& want) {
  double err = 0, scale = 0;
  for (size_t t = 0; t < want.size(); ++t)
    for (size_t i = 0; i < want[t].size(); ++i) {
      err = std::max(err, std::abs(double(got[t * want[t].size() + i]) - want[t][i]));
      scale = std::max(scale, std::abs(want[t][i]));
    }
  return err / scale;
}

const std::vector<int32_t> kPrompt = {3, 17, 5, 39, 0, 22, 8, 8, 31, 12, 1};

TEST(ReferenceMixture, MatchesThePlainForwardPass) {
  for (const char* arch : {"qwen3moe", "qwen2moe", "gpt-oss"}) {
    SCOPED_TRACE(arch);
    Shape s;
    s.arch = arch;
    Fixture f(s);
    const auto want = PlainMixture(s, f.weights).logits(kPrompt);
    reference::Reference ref(f.file, f.model, 2);
    const std::vector<float> got = ref.forward(kPrompt);
    ASSERT_EQ(got.size(), kPrompt.size() * s.vocab);
    // f32 logits against f64 sums in another order: the difference is the logits' rounding.
    EXPECT_LT(worst(got, want), 1e-6);
  }
}

// With every router logit 0, every expert ties: the tie rule selects experts 0 and 1, so the other experts' rows
// (NaN here) must be neither read into the output nor selected.
TEST(ReferenceMixture, TiesSelectTheLowestExpertsAndOnlyTheirRowsAreRead) {
  for (const char* arch : {"qwen3moe", "gpt-oss"}) {
    SCOPED_TRACE(arch);
    Shape s;
    s.arch = arch;
    s.router_zero = true;
    auto poison = [&](Weights& w) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (uint32_t l = 0; l < s.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        for (const char* name : {"ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight"}) {
          auto& v = w[b + name].second;
          std::fill(v.begin() + v.size() / s.experts * s.used, v.end(), nan);  // experts 2 and 3
        }
        if (s.arch == "gpt-oss")
          for (const char* name : {"ffn_gate_exps.bias", "ffn_up_exps.bias", "ffn_down_exps.bias"}) {
            auto& v = w[b + name].second;
            std::fill(v.begin() + v.size() / s.experts * s.used, v.end(), nan);
          }
      }
    };
    Fixture f(s, poison);
    const std::vector<float> got = reference::Reference(f.file, f.model, 2).forward(kPrompt);
    for (float x : got) ASSERT_TRUE(std::isfinite(x));
    // Experts 0 and 1 at weight 1/2 each (qwen3moe: 1/4 each, normalized; gpt-oss: softmax of two equal logits).
    EXPECT_LT(worst(got, PlainMixture(s, f.weights).logits(kPrompt)), 1e-6);
  }
}

// The logits do not depend on how the prompt is split into chunks nor on the thread count: bit for bit.
TEST(ReferenceMixture, ChunksAndThreadsGiveEqualLogits) {
  for (const char* preset : {"tiny-moe", "tiny-qwen2moe", "tiny-gpt-oss"}) {
    SCOPED_TRACE(preset);
    TempDir dir;
    synth::Options o;
    o.preset = preset;
    synth::write(o, dir / "m.gguf");
    auto file = gguf::File::open(dir / "m.gguf");
    const model::Model m = model::recognize(file);
    std::vector<int32_t> prompt;
    for (int i = 0; i < 13; ++i) prompt.push_back((37 * i + 5) % int(m.vocab));
    const std::vector<float> whole = reference::Reference(file, m, 1).forward(prompt);
    for (unsigned threads : {1u, 3u}) {
      reference::Reference ref(file, m, threads);
      for (size_t chunk : {size_t{1}, size_t{5}}) {
        ref.reset();
        std::vector<float> pieces;
        for (size_t at = 0; at < prompt.size(); at += chunk) {
          const size_t n = std::min(chunk, prompt.size() - at);
          auto part = ref.forward(std::span<const int32_t>(prompt.data() + at, n));
          pieces.insert(pieces.end(), part.begin(), part.end());
        }
        EXPECT_EQ(pieces, whole) << "threads " << threads << ", chunks of " << chunk;
      }
    }
  }
}

// gpt-oss's layer 0 slides over 4 positions; alone, it makes a position's logits depend on the last 4 tokens only.
TEST(ReferenceMixture, SlidingWindowHidesOlderPositions) {
  Shape s;
  s.arch = "gpt-oss";
  s.layers = 1;
  Fixture f(s);
  ASSERT_TRUE(f.model.layer[0].sliding);
  std::vector<int32_t> a = kPrompt, b = kPrompt;
  for (size_t i = 0; i + s.window < a.size(); ++i) b[i] = (a[i] + 7) % int32_t(s.vocab);  // all but the last 4
  const size_t vocab = s.vocab, last = a.size() - 1;
  const auto la = reference::Reference(f.file, f.model, 1).forward(a);
  const auto lb = reference::Reference(f.file, f.model, 1).forward(b);
  EXPECT_TRUE(std::equal(la.begin() + last * vocab, la.end(), lb.begin() + last * vocab));
  // One position earlier, a changed token is in the window: the logits move.
  EXPECT_FALSE(std::equal(la.begin() + (last - 1) * vocab, la.begin() + last * vocab, lb.begin() + (last - 1) * vocab));

  // The same model with its window widened past the prompt sees every position.
  Shape wide = s;
  wide.window = 64;
  Fixture g(wide);
  const auto wa = reference::Reference(g.file, g.model, 1).forward(a);
  const auto wb = reference::Reference(g.file, g.model, 1).forward(b);
  EXPECT_FALSE(std::equal(wa.begin() + last * vocab, wa.end(), wb.begin() + last * vocab));
}

// A sink adds exp(sink) to each head's softmax denominator: a sink far below every logit changes nothing (the
// attention of a model without sinks), a large one drains the attention (only the output bias is left).
TEST(ReferenceMixture, SinksJoinTheSoftmaxDenominator) {
  Shape s;
  s.arch = "gpt-oss";
  auto run = [&](float sink) {
    Shape t = s;
    t.sink = sink;
    Fixture f(t);
    return reference::Reference(f.file, f.model, 1).forward(kPrompt);
  };
  // The same model with its value projections zeroed: every head's output is 0, whatever its softmax.
  auto without_values = [&] {
    Shape t = s;
    t.sink = 1.f;
    Fixture f(t, [&](Weights& w) {
      for (uint32_t l = 0; l < t.layers; ++l)
        for (const char* name : {"attn_v.weight", "attn_v.bias"}) {
          auto& v = w["blk." + std::to_string(l) + "." + name].second;
          std::fill(v.begin(), v.end(), 0.f);
        }
    });
    return reference::Reference(f.file, f.model, 1).forward(kPrompt);
  };
  const auto deep = run(-1e30f), shallow = run(1.f), drained = run(1e30f);
  // Far below every logit: the plain pass, whose softmax over the logits and the sink gives the sink nothing.
  Shape plain = s;
  plain.sink = -1e30f;
  Fixture f(plain);
  EXPECT_LT(worst(deep, PlainMixture(plain, f.weights).logits(kPrompt)), 1e-6);
  EXPECT_NE(deep, shallow);
  // Far above every logit: every weight exp(logit - sink) is 0, as if the values were all zero (bit for bit).
  EXPECT_EQ(drained, without_values());
}

}  // namespace
}  // namespace lt::test
