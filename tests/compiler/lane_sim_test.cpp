// The lane's schedule executed on the CPU (lane_sim.hpp) against the CPU reference: every dense tiny preset under knob
// sets that cover the numerics, the chunks, the attention's splits and fold, and the fused launches. An arena slot
// read before any launch of the step wrote it reads the poison (NaN) and fails the comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "compiler/ggml_types.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane_schedule.hpp"
#include "compiler/lane_sim.hpp"
#include "compiler/model.hpp"
#include "compiler/reference.hpp"
#include "compiler/synth.hpp"
#include "compiler/wide_heads.hpp"
#include "support/test_support.hpp"

namespace lt::test {
namespace {

using nlohmann::json;

// The relative L2 distance of a from b.
double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    n += double(b[i]) * b[i];
  }
  return std::sqrt(d / n);
}

class LanePlanOnCpu : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

const json kKnobSets[] = {
    json{{"numerics", "precise"}},
    json{{"numerics", "dequant"}},
    json{{"numerics", "precise"},
         {"max_chunk", 64},
         {"attn_splits", 16},
         {"fuse_qkv", true},
         {"fuse_glu", true},
         {"fuse_rope_kv", true}},
    json{{"numerics", "dequant"}, {"max_chunk", 4}, {"attn_splits", 1}, {"fuse_rope_kv", true}},
    json{{"numerics", "int8"}, {"max_chunk", 64}, {"fuse_qkv", true}, {"fuse_glu", true}},
    json{{"numerics", "int8x2"}, {"max_chunk", 16}},
    json{{"numerics", "dequant"}, {"fuse_norm", true}, {"max_chunk", 64}, {"fuse_glu", true}},
    json{{"numerics", "precise"}, {"fuse_norm", true}, {"max_chunk", 4}},
    json{{"numerics", "dequant"},
         {"fuse_qkv", true},
         {"fuse_rope_kv", true},
         {"fuse_rope", true},
         {"attn_heads", 1},
         {"max_chunk", 16}},
    json{{"numerics", "int8"}, {"side_streams", true}, {"max_chunk", 64}, {"attn_splits", 2}},
    json{{"numerics", "precise"}, {"side_streams", true}, {"fuse_qkv", true}, {"max_chunk", 4}},
    json{
        {"numerics", "int8x2"}, {"gemm_prequant", true}, {"max_chunk", 64}, {"side_streams", true}, {"fuse_glu", true}},
    json{{"numerics", "int8"},
         {"gemm_prequant", true},
         {"max_chunk", 16},
         {"fuse_qkv", true},
         {"fuse_rope_kv", true},
         {"fuse_rope", true},
         {"fuse_norm", true}},
    json{{"numerics", "int8"},
         {"gemv_prequant", true},
         {"max_chunk", 16},
         {"fuse_qkv", true},
         {"fuse_glu", true},
         {"gemv_rows_per_warp", 2}},
    // 14-17: the compact caches, with the attention a lane a position (decode and chunks) and without.
    json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_lanes", true}, {"max_chunk", 16}, {"attn_splits", 4}},
    json{{"numerics", "dequant"}, {"kv_cache", "bf16"}, {"fuse_rope_kv", true}, {"max_chunk", 64}},
    json{{"numerics", "int8"},
         {"kv_cache", "q8_0"},
         {"fuse_qkv", true},
         {"fuse_rope_kv", true},
         {"fuse_rope", true},
         {"attn_lanes", true},
         {"attn_splits", 2},
         {"max_chunk", 16}},
    json{{"numerics", "precise"}, {"attn_lanes", true}, {"attn_splits", 16}, {"max_chunk", 64}},
    // 18-20: attention on the tensor cores (attn_mma), whole and split, over either 16-bit cache: the chunks' (1),
    // then the decode step's too (2; chunks of 4 rows take its shape too).
    json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_mma", 1}, {"max_chunk", 64}, {"attn_splits", 1}},
    json{{"numerics", "int8x2"},
         {"kv_cache", "bf16"},
         {"attn_mma", 2},
         {"fuse_rope_kv", true},
         {"max_chunk", 16},
         {"attn_splits", 4}},
    json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_mma", 2}, {"max_chunk", 4}, {"attn_splits", 1}},
    // 21-22: a chunk's GEMMs in f16 (gemm_half), under dequant with the fused launches and under int8 with the decode
    // step's quantized copy beside the chunks' f16 one.
    json{{"numerics", "dequant"}, {"gemm_half", true}, {"max_chunk", 64}, {"fuse_qkv", true}, {"fuse_glu", true}},
    json{{"numerics", "int8"},
         {"gemm_half", true},
         {"gemv_prequant", true},
         {"max_chunk", 256},
         {"fuse_glu", true},
         {"kv_cache", "f16"},
         {"attn_mma", 1}},
    // 23: the decode step's rope and append done by its tensor-core attention (fuse_rope_kv under attn_mma 2), one
    // split.
    json{{"numerics", "int8"},
         {"gemv_prequant", true},
         {"kv_cache", "f16"},
         {"attn_mma", 2},
         {"fuse_qkv", true},
         {"fuse_rope_kv", true},
         {"attn_splits", 1},
         {"max_chunk", 16}},
};

// The bound on the relative L2 error of each numerics' logits (the issues' bounds; the CPU's model of the
// int8 numerics quantizes as the kernels do, so these are the GPU's bounds too), widened by a compact cache's bound
// (the model rounds the cached values as the kernels store them).
double bound(knobs::Numerics n);
double bound(const knobs::Knobs& k) {
  return std::hypot(bound(k.numerics), knobs::rounding_bound(k));  // (independent errors: knobs::tolerance's rule)
}
double bound(knobs::Numerics n) {
  switch (n) {
    case knobs::Numerics::Precise:
      return 1e-12;
    case knobs::Numerics::Dequant:
      return 1e-5;
    case knobs::Numerics::Int8:
      return 3e-2;
    case knobs::Numerics::Int8x2:
      return 1e-3;
  }
  return 0;
}

// The CPU's model of the lane scheduled for `o`'s checkpoint under knobs `j` against the reference, over prompts of
// `lengths` tokens: the same tokens (the int8 numerics: but for a near tie) and logits within the numerics' bound, or
// within `wider` where that is set; lanes of `context` positions (0: the model's, at most 4,096).
void matches_the_reference(const synth::Options& o, const json& j, const std::vector<int>& lengths = {5, 23, 77},
                           double wider = 0, int context = 0) {
  TempDir dir;
  synth::write(o, dir / "m.gguf");
  const char* preset = o.preset.c_str();
  const gguf::File file = gguf::File::open(dir / "m.gguf");
  const model::Model m = model::recognize(file);
  const knobs::Knobs k = knobs::Knobs::from_json(j);
  const lane::Schedule schedule = lane::schedule(file, m, k, {132, 90, context});
  reference::Reference ref(file, m, 2);
  std::mt19937 rng(11);
  for (int len : lengths) {
    std::vector<int32_t> prompt(len);
    for (auto& t : prompt) t = int32_t(rng() % m.vocab);
    const reference::Generation want = ref.generate(prompt, 4);
    reference::Generation got;
    if (k.numerics == knobs::Numerics::Precise)
      got = LaneSim<double>(file, schedule).generate(prompt, 4);
    else
      got = LaneSim<float>(file, schedule).generate(prompt, 4);
    ASSERT_EQ(got.logits.size(), want.logits.size());
    ASSERT_EQ(got.tokens.size(), want.tokens.size());
    // The int8 numerics may flip a near tie (the worker's rule, worker/src/checks.cpp): where the reference's top two
    // lie within 4 bounds (times the row's RMS); the rows after a flip have another context and are left out.
    const bool lossy =
        k.numerics == knobs::Numerics::Int8 || k.numerics == knobs::Numerics::Int8x2 || knobs::rounding_bound(k) > 0;
    const std::string what = std::string(preset) + " " + std::string(ggml::traits_of(o.type).name) +
                             (o.mixed ? "_m " : " ") + j.dump() + " prompt " + std::to_string(len);
    auto rms = [&](const float* r) {  // a row of logits' RMS: the scale of its errors
      double ss = 0;
      for (size_t v = 0; v < m.vocab; ++v) ss += double(r[v]) * r[v];
      return std::sqrt(ss / m.vocab);
    };
    size_t rows = want.tokens.size();
    for (size_t i = 0; i < want.tokens.size(); ++i) {
      if (got.tokens[i] == want.tokens[i]) continue;
      ASSERT_TRUE(lossy) << what << ": the tokens differ at " << i;
      const float* r = want.logits.data() + i * m.vocab;
      EXPECT_LE(r[want.tokens[i]] - r[got.tokens[i]], 4 * bound(k) * rms(r))
          << what << ": a flip at " << i << " that is no near tie";
      rows = i + 1;
      break;
    }
    const size_t n = rows * m.vocab;
    if (k.numerics == knobs::Numerics::Precise && wider == 0) {
      // The f64 sums in the lane's order differ from the reference's by their rounding (~1e-16 of the row's scale),
      // which the float logits keep but where a logit lies that close to a float rounding boundary (one ulp: draw
      // 10,768, one logit of 2,700) or is that small itself (a sum cancelling to ~1e-9: draw 32,407, off by 1e-15).
      // Every logit equal, one ulp away or within 1e-12 of its row's RMS; an f32 step anywhere would move most by more.
      size_t far = 0, near = 0;
      for (size_t row = 0; row < rows; ++row) {
        const float* w = want.logits.data() + row * m.vocab;
        const float* g = got.logits.data() + row * m.vocab;
        const double scale = rms(w);
        for (size_t v = 0; v < m.vocab; ++v) {
          if (g[v] == w[v]) continue;
          ++(std::nextafter(w[v], g[v]) == g[v] || std::fabs(double(g[v]) - w[v]) <= 1e-12 * scale ? near : far);
        }
      }
      EXPECT_EQ(far, 0u) << what << " (" << near << " logits one ulp or 1e-12 of the RMS away)";
      continue;
    }
    const double err = rel_l2(std::vector<float>(got.logits.begin(), got.logits.begin() + n),
                              std::vector<float>(want.logits.begin(), want.logits.begin() + n));
    if (lossy) std::printf("%s: relative L2 %.3g over %zu rows\n", what.c_str(), err, rows);
    EXPECT_LE(err, wider > 0 ? wider : bound(k)) << what;
  }
}

TEST_P(LanePlanOnCpu, MatchesTheReference) {
  auto [preset, set] = GetParam();
  synth::Options o;
  o.preset = preset;
  o.seed = 5;
  matches_the_reference(o, kKnobSets[set]);
}

// The block formats read in place (kernels/formats.cuh's lk_blk): every format under the numerics and the fusions,
// with llama.cpp's q4_k_m and q5_k_m mixes (q6_k attn_v and ffn_down in some layers: the fusions over q, k, v fall
// back in those). The int8 numerics' products read the block formats' codes (dp4a in decode; under gemm_prequant the
// chunks' tensor-core GEMMs, set 11).
class BlockFormatsOnCpu : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(BlockFormatsOnCpu, MatchTheReference) {
  auto [type, set] = GetParam();
  synth::Options o;
  o.preset = "tiny-qwen3";
  o.seed = 7;
  const std::string t = type;
  o.mixed = t.size() > 4 && t.substr(4) == "_m";
  o.type = *ggml::parse_type(o.mixed ? t.substr(0, 4) : t);
  if (o.mixed) o.preset = set % 2 ? "tiny-llama" : "tiny-qwen2";
  matches_the_reference(o, kKnobSets[set]);
}

INSTANTIATE_TEST_SUITE_P(Formats, BlockFormatsOnCpu,
                         ::testing::Combine(::testing::Values("q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k",
                                                              "mxfp4", "iq4_nl", "iq4_xs", "q2_k", "q3_k", "q4_k_m",
                                                              "q5_k_m"),
                                            ::testing::Values(0, 1, 2, 4, 5, 8, 10, 11, 13, 21, 22)));
// gemm_half reads every format, the plain ones too (their chunks' GEMMs are otherwise GEMV slabs).
INSTANTIATE_TEST_SUITE_P(PlainFormats, BlockFormatsOnCpu,
                         ::testing::Combine(::testing::Values("f16", "bf16"), ::testing::Values(1, 21)));

// fuse_qkv_mixed: q and k in Q4_K beside a Q6_K v (the q4_k_m mix) projected in one launch, the plan model's numbers
// against the reference as the separate launches' are.
TEST(LanePlanOnCpu, AMixedFormatQkvLaunchMatchesTheReference) {
  synth::Options o;
  o.preset = "tiny-llama";
  o.seed = 7;
  o.type = ggml::Type::Q4_K;
  o.mixed = true;
  matches_the_reference(o, {{"numerics", "dequant"}, {"fuse_qkv", true}, {"fuse_qkv_mixed", true}, {"max_chunk", 16}});
  matches_the_reference(o, {{"numerics", "int8"}, {"gemv_prequant", true}, {"fuse_qkv", true}, {"fuse_qkv_mixed", true},
                            {"max_chunk", 16}});
}

// norm_fold: the decode step's add + norms folded into the o and down projections (the copy of x * w unscaled, the
// readers' sums scaled by the spans' sums of squares) agree with the reference as the norm launches do: tiny-llama
// Q4_K_M (Q6_K downs and logits among Q4_K) under int8 and int8x2, qwen2's biases over Q8_0, prompts that take the
// decode step after chunks.
TEST(LanePlanOnCpu, FoldedNormsMatchTheReference) {
  const synth::Options o{.preset = "tiny-llama", .type = ggml::Type::Q4_K, .mixed = true, .seed = 9};
  for (const char* numerics : {"int8", "int8x2"})
    matches_the_reference(o, {{"numerics", numerics},
                              {"gemv_prequant", true},
                              {"norm_fold", true},
                              {"fuse_qkv", true},
                              {"fuse_glu", true},
                              {"max_chunk", 16}});
  matches_the_reference(synth::Options{.preset = "tiny-qwen2", .seed = 4},
                        {{"numerics", "int8"}, {"gemv_prequant", true}, {"norm_fold", true}, {"max_chunk", 16}});
}

// glu_groups: the decode step's fused gate/up GEMV writing the down projection's int8 copy itself (the quantize launch
// gone) computes what the launch did: tiny-llama Q4_K_M (k 256: its GLU rows one unit a lane), int8 and int8x2, with
// norm_fold and without; tiny-qwen3 Q8_0 (k 256: one Q8_0 unit of 16 values a lane, gate then up).
TEST(LanePlanOnCpu, TheGluWritingItsCopyMatchesTheReference) {
  const synth::Options q4km{.preset = "tiny-llama", .type = ggml::Type::Q4_K, .mixed = true, .seed = 11};
  const synth::Options q8{.preset = "tiny-qwen3", .seed = 12};
  for (const synth::Options& o : {q4km, q8})
    for (const char* numerics : {"int8", "int8x2"})
      for (const bool fold : {false, true})
        matches_the_reference(o, {{"numerics", numerics},
                                  {"gemv_prequant", true},
                                  {"glu_groups", true},
                                  {"norm_fold", fold},
                                  {"fuse_qkv", true},
                                  {"fuse_glu", true},
                                  {"max_chunk", 16}});
}

// gemm_prequant and gemv_prequant move where the activations are quantized, not what they are: the schedule with them
// computes the very logits of the schedule without them (the CPU's model reads the QuantizeI8 buffers as lk_gemm_i8q
// and the GEMVs read them), in chunks of 64 rows or of 256 (each row's products and sums are its own whatever the
// chunk).
TEST(LanePlanOnCpu, PrequantizedActivationsAreTheSameNumbers) {
  for (const char* numerics : {"int8", "int8x2"}) {
    TempDir dir;
    synth::Options o;
    o.preset = "tiny-qwen3";
    o.seed = 5;
    synth::write(o, dir / "m.gguf");
    const gguf::File file = gguf::File::open(dir / "m.gguf");
    const model::Model m = model::recognize(file);
    json j = {{"numerics", numerics}, {"max_chunk", 64}, {"fuse_qkv", true}, {"fuse_glu", true}};
    const lane::Schedule staged = lane::schedule(file, m, knobs::Knobs::from_json(j), {132, 90});
    j["gemm_prequant"] = j["gemv_prequant"] = true;
    const lane::Schedule prequant = lane::schedule(file, m, knobs::Knobs::from_json(j), {132, 90});
    j["max_chunk"] = 256;
    const lane::Schedule chunks256 = lane::schedule(file, m, knobs::Knobs::from_json(j), {132, 90});
    auto quantizes = [](const lane::Form& f, bool fragments) {
      size_t n = 0;
      for (const lane::Launch& l : f.launches)
        if (const auto* q = std::get_if<lane::QuantizeI8>(&l.op)) n += q->fragments == fragments;
      return n;
    };
    auto folded = [](const lane::Form& f) {  // (copies a norm's, a fold's or an attention's launch writes)
      size_t n = 0;
      for (const lane::Launch& l : f.launches) {
        if (const auto* a = std::get_if<lane::AddNorm>(&l.op)) n += a->xq.has_value();
        if (const auto* b = std::get_if<lane::Fold>(&l.op)) n += b->xq.has_value();
        if (const auto* c = std::get_if<lane::Attention>(&l.op)) n += c->xq.has_value();
      }
      return n;
    };
    const bool tied_q8 = m.output && m.output->type == ggml::Type::Q8_0;
    ASSERT_EQ(prequant.forms[0].rows, 1);
    EXPECT_EQ(quantizes(prequant.forms[0], false) + folded(prequant.forms[0]), 4 * m.layers + (tied_q8 ? 1 : 0))
        << "decode: h (q, k and v), a, h2 (gate and up) and s of every layer, once each, and the logits' input";
    EXPECT_EQ(quantizes(prequant.forms[0], false), size_t(m.layers)) << "decode: s alone has a quantize launch";
    EXPECT_EQ(quantizes(prequant.forms[1], true), 4 * m.layers) << "the 64-row chunk's, in the tensor cores' order";
    EXPECT_EQ(quantizes(staged.forms[0], false), 0u);
    std::vector<int32_t> prompt(300);
    std::mt19937 rng(3);
    for (auto& t : prompt) t = int32_t(rng() % m.vocab);
    const reference::Generation a = LaneSim<float>(file, staged).generate(prompt, 3);
    const reference::Generation b = LaneSim<float>(file, prequant).generate(prompt, 3);
    const reference::Generation c = LaneSim<float>(file, chunks256).generate(prompt, 3);
    EXPECT_EQ(a.tokens, b.tokens) << numerics;
    EXPECT_EQ(a.logits, b.logits) << numerics;
    EXPECT_EQ(a.tokens, c.tokens) << numerics;
    EXPECT_EQ(a.logits, c.logits) << numerics;
    // With one split the decode step's attention writes the copy (no fold, no quantize launch after it): the same
    // numbers as its schedule without the copies.
    j["max_chunk"] = 64;
    j["attn_splits"] = 1;
    const lane::Schedule one = lane::schedule(file, m, knobs::Knobs::from_json(j), {132, 90});
    j["gemm_prequant"] = j["gemv_prequant"] = false;
    const lane::Schedule one_staged = lane::schedule(file, m, knobs::Knobs::from_json(j), {132, 90});
    size_t attention_copies = 0;
    for (const lane::Launch& l : one.forms[0].launches)
      if (const auto* at = std::get_if<lane::Attention>(&l.op)) attention_copies += at->xq.has_value();
    EXPECT_EQ(attention_copies, size_t(m.layers));
    EXPECT_EQ(quantizes(one.forms[0], false), size_t(m.layers)) << "decode: s alone has a quantize launch";
    EXPECT_EQ(folded(one.forms[0]), 3 * m.layers + (tied_q8 ? 1 : 0));
    const reference::Generation d = LaneSim<float>(file, one).generate(prompt, 3);
    const reference::Generation e = LaneSim<float>(file, one_staged).generate(prompt, 3);
    EXPECT_EQ(d.tokens, e.tokens) << numerics;
    EXPECT_EQ(d.logits, e.logits) << numerics;
  }
}

// A tiny preset's checkpoint (seeded) with its model told it was trained on `context` positions: what a lane past
// 4,096 positions needs.
struct LongContextModel {
  TempDir dir;
  gguf::File file;
  model::Model model;
  LongContextModel(const char* preset, uint64_t seed, uint32_t context)
      : file(gguf::File::open(written(dir, preset, seed))), model(model::recognize(file)) {
    model.context = context;
  }
  static std::filesystem::path written(const TempDir& dir, const char* preset, uint64_t seed) {
    synth::write(synth::Options{.preset = preset, .seed = seed}, dir / "m.gguf");
    return dir / "m.gguf";
  }
};

// attn_fold_launch (a knob of lanes past 4,096 positions): the decode step's split attention on the tensor cores
// folded by a launch of its own, which writes the int8 copy, against the reference; tiny-qwen3 told it was trained on
// 8,192 positions, prompts past a split's whole tiles.
TEST(LanePlanOnCpu, TheStepsFoldInALaunchOfItsOwn) {
  const LongContextModel l("tiny-qwen3", 5, 8192);
  const gguf::File& file = l.file;
  const model::Model& m = l.model;
  reference::Reference ref(file, m, 2);
  for (const char* numerics : {"dequant", "int8"}) {
    const knobs::Knobs k = knobs::Knobs::from_json(json{{"numerics", numerics},
                                                        {"gemv_prequant", std::string(numerics) == "int8"},
                                                        {"kv_cache", "f16"},
                                                        {"attn_mma", 2},
                                                        {"fuse_rope_kv", true},
                                                        {"attn_splits", 4},
                                                        {"attn_fold_launch", true},
                                                        {"max_chunk", 16},
                                                        {"context", 8192}});
    const lane::Schedule schedule = lane::schedule(file, m, k, {132, 90, 8192});
    std::mt19937 rng(9);
    for (int len : {7, 150}) {
      std::vector<int32_t> prompt(len);
      for (auto& t : prompt) t = int32_t(rng() % m.vocab);
      const reference::Generation want = ref.generate(prompt, 4);
      const reference::Generation got = LaneSim<float>(file, schedule).generate(prompt, 4);
      ASSERT_EQ(got.logits.size(), want.logits.size());
      const double err = rel_l2(got.logits, want.logits);
      EXPECT_LE(err, bound(k)) << numerics << " prompt " << len;
      if (k.numerics == knobs::Numerics::Dequant) {
        EXPECT_EQ(got.tokens, want.tokens) << len;
      }
    }
  }
}

// The decode step's own fold (attn_mma 2, more than one split) spreads a span over its splits only past
// LK_AM_FOLD_TILES tiles of positions: a shorter one is one split (its fold would cost more than the tiles it spreads);
// then whole tiles a split as before. The rule, then decode steps past it (a prompt of 300: 3 parts of 4 splits) and
// short of it against the reference.
TEST(LanePlanOnCpu, TheStepSplitsItsOwnFoldOnlyPastFourTiles) {
  auto parts = [](int span, int splits) {
    const int chunk = lk_am_fold_chunk(span, splits);
    return (span + chunk - 1) / chunk;
  };
  for (int splits : {2, 4, 16})
    for (int span : {1, 64, 65, 200, 256}) EXPECT_EQ(parts(span, splits), 1) << span << " positions, " << splits;
  EXPECT_EQ(parts(257, 16), 5);
  EXPECT_EQ(parts(301, 4), 3);
  EXPECT_EQ(parts(300, 2), 2);
  EXPECT_EQ(parts(4096, 16), 16);
  for (const bool int8 : {false, true})
    matches_the_reference(synth::Options{.preset = "tiny-qwen3", .seed = 5},
                          {{"numerics", int8 ? "int8" : "dequant"},
                           {"gemv_prequant", int8},
                           {"kv_cache", "f16"},
                           {"attn_mma", 2},
                           {"fuse_rope_kv", true},
                           {"attn_splits", 4},
                           {"max_chunk", 64}},
                          {5, 300});
}

// A lane holds more than 4,096 positions when its context knob says so (up to the model's trained context): a prompt
// that runs past position 4,096 through chunks of 256 and decode steps, under the 8-bit cache, the attention a lane a
// position split 64 ways (a domain only such contexts have), against the reference. The model is tiny-llama told it
// was trained on 8,192 positions. (One cache type: the attention over 4,100 positions is most of a minute on the CPU;
// the knob sets above take every cache type through the same launches at short contexts.)
TEST(LanePlanOnCpu, AContextPast4096) {
  const LongContextModel l("tiny-llama", 3, 8192);
  const gguf::File& file = l.file;
  const model::Model& m = l.model;
  reference::Reference ref(file, m, 2);
  std::mt19937 rng(5);
  std::vector<int32_t> prompt(4100);
  for (auto& t : prompt) t = int32_t(rng() % m.vocab);
  const reference::Generation want = ref.generate(prompt, 3);
  for (const char* cache : {"q8_0"}) {
    const knobs::Knobs k = knobs::Knobs::from_json(
        json{{"context", 8192}, {"kv_cache", cache}, {"attn_lanes", true}, {"attn_splits", 64}, {"max_chunk", 256}});
    const lane::Schedule schedule = lane::schedule(file, m, k, {132, 90});
    ASSERT_EQ(schedule.ctx, 8192);
    const reference::Generation got = LaneSim<float>(file, schedule).generate(prompt, 3);
    ASSERT_EQ(got.logits.size(), want.logits.size());
    const double err = rel_l2(got.logits, want.logits);
    std::printf("kv_cache %s past position 4096: relative L2 %.3g\n", cache, err);
    EXPECT_LE(err, bound(k)) << cache;
    EXPECT_EQ(got.tokens, want.tokens) << cache;
  }
}

// The mixtures (qwen3moe: tiny-moe; qwen2moe with its shared expert: tiny-qwen2moe) under knob sets that cover the
// numerics, decode and the chunks (a grid over rows and slots), the combine folded with the next norm (fuse_norm),
// side streams and the quantized copies of the dense parts. Sets 9 and 10 pair the shared expert's gate and up
// (fuse_glu: only where a model has a shared expert or a dense FFN).
const json kMixtureKnobSets[] = {
    json{{"numerics", "precise"}},
    json{{"numerics", "dequant"}},
    json{{"numerics", "precise"}, {"max_chunk", 64}, {"attn_splits", 16}, {"fuse_qkv", true}, {"fuse_rope_kv", true}},
    json{{"numerics", "dequant"}, {"max_chunk", 4}, {"fuse_norm", true}},
    json{{"numerics", "int8"}, {"max_chunk", 64}, {"fuse_qkv", true}},
    json{{"numerics", "int8x2"}, {"max_chunk", 16}, {"gemv_prequant", true}},
    json{{"numerics", "dequant"}, {"fuse_norm", true}, {"side_streams", true}, {"max_chunk", 16}},
    json{{"numerics", "int8"}, {"gemm_prequant", true}, {"max_chunk", 16}, {"fuse_norm", true}},
    json{{"numerics", "precise"}, {"fuse_norm", true}, {"max_chunk", 4}, {"gemv_rows_per_warp", 2}},
    json{{"numerics", "dequant"}, {"fuse_glu", true}, {"max_chunk", 16}, {"fuse_norm", true}},
    json{
        {"numerics", "int8x2"}, {"fuse_glu", true}, {"gemm_prequant", true}, {"max_chunk", 64}, {"side_streams", true}},
    // 11: the chunks' experts on the tensor cores in f16 (gemm_half: lk_moe_gemm_h over the grouped pairs' f16 copy),
    // the dense parts' GEMMs too.
    json{{"numerics", "dequant"}, {"gemm_half", true}, {"max_chunk", 64}},
};

class MixtureOnCpu : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(MixtureOnCpu, MatchesTheReference) {
  auto [preset, set] = GetParam();
  matches_the_reference(synth::Options{.preset = preset, .seed = 5}, kMixtureKnobSets[set]);
}

INSTANTIATE_TEST_SUITE_P(Qwen3Moe, MixtureOnCpu,
                         ::testing::Combine(::testing::Values("tiny-moe"),
                                            ::testing::Values(0, 1, 2, 3, 4, 5, 6, 7, 8, 11)));
INSTANTIATE_TEST_SUITE_P(Qwen2Moe, MixtureOnCpu,
                         ::testing::Combine(::testing::Values("tiny-qwen2moe"),
                                            ::testing::Range(0, int(std::size(kMixtureKnobSets)))));

// The experts read in place in each format the lane reads (the 3-D tensors uploaded as they are): the plain ones and
// the block formats, under dequant (with chunks of 4 and the folded norm) and, for the quantized ones, int8x2 (dp4a
// over the experts' codes). (Under int8 the random router of a tiny model flips an expert on near ties: an expert of
// another row is another function, so the logits move far past int8's bound. q8_0 passes int8 above.)
class MixtureFormatsOnCpu : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(MixtureFormatsOnCpu, MatchTheReference) {
  auto [type, set] = GetParam();
  matches_the_reference(synth::Options{.preset = "tiny-moe", .type = *ggml::parse_type(type), .seed = 7},
                        kMixtureKnobSets[set]);
}

INSTANTIATE_TEST_SUITE_P(PlainFormats, MixtureFormatsOnCpu,
                         ::testing::Combine(::testing::Values("f32", "f16", "bf16"), ::testing::Values(1, 3)));
INSTANTIATE_TEST_SUITE_P(BlockFormats, MixtureFormatsOnCpu,
                         ::testing::Combine(::testing::Values("q4_0", "q4_k", "q5_k", "q6_k", "mxfp4", "iq4_xs"),
                                            ::testing::Values(1, 3, 5, 11)));

// gpt-oss (tiny-gpt-oss): its experts (the router's bias, the k largest logits' softmax, the experts' biases and
// clamped SwiGLU) and its attention: each head's sink in the softmax's denominator, a sliding window of 128 positions
// on the even layers, YaRN rope (the sidecar's tables) and the output projection's bias. The prompts run past the
// window (200 tokens: chunks whose later rows and the decode steps see only their last 128 positions) through every
// attention path: lk_attention whole and split (the sinks in the fold), fewer heads a block, lk_attention_lanes, and
// lk_attention_mma in its chunk and STEP shapes, whole and split; the output bias in the plain projection, the folded
// norm's (fuse_norm) and the tensor cores' (int8x2). (int8 flips an expert of the random router on a near tie, as on
// the other mixtures' formats: another expert is another function, so the logits move past int8's bound.)
const json kGptOssKnobSets[] = {
    json{{"numerics", "precise"}},
    json{{"numerics", "dequant"}},
    json{{"numerics", "precise"}, {"max_chunk", 64}, {"attn_splits", 16}, {"fuse_qkv", true}, {"fuse_rope_kv", true}},
    json{{"numerics", "dequant"}, {"max_chunk", 4}, {"attn_splits", 1}, {"fuse_norm", true}},
    json{{"numerics", "int8x2"}, {"max_chunk", 64}, {"fuse_qkv", true}, {"fuse_norm", true}},
    json{{"numerics", "int8x2"}, {"max_chunk", 16}, {"gemv_prequant", true}, {"attn_splits", 2}},
    json{{"numerics", "precise"}, {"max_chunk", 16}, {"attn_heads", 1}, {"attn_splits", 1}, {"fuse_norm", true}},
    // 7-8: a lane a position, split and whole.
    json{{"numerics", "dequant"}, {"attn_lanes", true}, {"attn_splits", 4}, {"max_chunk", 16}},
    json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_lanes", true}, {"attn_splits", 1}, {"max_chunk", 64}},
    // 9-12: the tensor cores: the chunks' (1), then the decode step's too (2; chunks of 4 rows take its STEP shape),
    // whole (the kernel adds the sinks) and split (the fold does).
    json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_mma", 1}, {"max_chunk", 64}, {"attn_splits", 1}},
    json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_mma", 2}, {"max_chunk", 16}, {"attn_splits", 4}},
    json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_mma", 2}, {"max_chunk", 4}, {"attn_splits", 1}},
    json{{"numerics", "int8x2"}, {"kv_cache", "bf16"}, {"attn_mma", 2}, {"max_chunk", 64}, {"attn_splits", 2}},
    json{{"numerics", "int8x2"},
         {"gemm_prequant", true},
         {"max_chunk", 16},
         {"fuse_norm", true},
         {"side_streams", true}},
    // 14: the chunks' GEMMs in f16, the experts' (their biases and clamped SwiGLU in lk_moe_gemm_h's epilogue) too.
    json{{"numerics", "dequant"}, {"gemm_half", true}, {"max_chunk", 64}},
    // 15: the decode step's rope (YaRN's tables) and append done by its tensor-core attention, split.
    json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_mma", 2}, {"fuse_rope_kv", true}, {"max_chunk", 16},
         {"attn_splits", 2}},
};

// The bound of set `set` of kGptOssKnobSets: the numerics' and cache's (0), but for the tensor cores' attention over an
// f16 cache in the decode step (sets 10 and 11). tiny-gpt-oss's f16 cache alone takes its logits to 0.8e-3 of the
// cache's 1e-3 on the 77-token prompt (lk_attention_lanes, set 8), and lk_attention_mma's STEP shape, rounding the
// queries and weights to f16 too, to 1.03e-3 and 1.10e-3. YaRN's attention factor (1.35, squared into every logit)
// doubles them: with plain rope the same sets measure 0.42e-3 to 0.45e-3 (the sinks change them by under 0.05e-3).
// Those two are held to 1.2e-3; bench/calls/s13_gptoss.sh shows the GPU's verdict at the worker's 1e-3.
double gpt_oss_bound(int set) {
  return set == 10 || set == 11 || set == 15 ? 1.2e-3 : 0;
}

class GptOssOnCpu : public ::testing::TestWithParam<int> {};

TEST_P(GptOssOnCpu, MatchesTheReference) {
  matches_the_reference(synth::Options{.preset = "tiny-gpt-oss", .seed = 5}, kGptOssKnobSets[GetParam()], {5, 77, 200},
                        gpt_oss_bound(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(KnobSets, GptOssOnCpu, ::testing::Range(0, int(std::size(kGptOssKnobSets))));

// gpt-oss's experts in MXFP4, as gpt-oss ships them, under the numerics and the tensor cores' attention.
class GptOssMxfp4OnCpu : public ::testing::TestWithParam<int> {};

TEST_P(GptOssMxfp4OnCpu, MatchesTheReference) {
  matches_the_reference(synth::Options{.preset = "tiny-gpt-oss", .type = ggml::Type::MXFP4, .seed = 5},
                        kGptOssKnobSets[GetParam()], {5, 200}, gpt_oss_bound(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(KnobSets, GptOssMxfp4OnCpu, ::testing::Values(1, 3, 5, 10, 14));

// A mixture's rows are routed each on its own and each row's expert sums are its own in the grouped slabs (the decode
// step's numbers), and a row's attention covers its own positions (on gpt-oss's sliding layers its own window's, from
// its own first), so chunks do not change a row's numbers: the logits of 40 prompt tokens (gpt-oss: 150, past its
// window of 128) prefilled one at a time, in chunks of 4 and in chunks of 16 are the same bits.
TEST(MixtureOnCpu, ChunksDoNotChangeTheNumbers) {
  for (const auto& [preset, length] : {std::pair{"tiny-qwen2moe", 40}, {"tiny-gpt-oss", 150}}) {
    TempDir dir;
    synth::write(synth::Options{.preset = preset, .seed = 5}, dir / "m.gguf");
    const gguf::File file = gguf::File::open(dir / "m.gguf");
    const model::Model m = model::recognize(file);
    std::vector<int32_t> prompt(length);
    std::mt19937 rng(9);
    for (auto& t : prompt) t = int32_t(rng() % m.vocab);
    std::vector<reference::Generation> runs;
    for (int chunk : {1, 4, 16}) {
      const json j = {{"numerics", "dequant"}, {"max_chunk", chunk}, {"attn_splits", 1}};
      const lane::Schedule p = lane::schedule(file, m, knobs::Knobs::from_json(j), {132, 90});
      runs.push_back(LaneSim<float>(file, p).generate(prompt, 3));
    }
    EXPECT_EQ(runs[0].logits, runs[1].logits) << preset;
    EXPECT_EQ(runs[0].logits, runs[2].logits) << preset;
    EXPECT_EQ(runs[0].tokens, runs[2].tokens) << preset;
  }
}

// gemv_prequant in a mixture's decode step: the experts read int8 copies (gate and up x's, which the norm before the
// router writes; down each pair's row of the GLU's output, one quantize launch), the same integers and scales the
// kernels quantize in registers without it, so the same logits bit for bit (both numerics; gpt-oss's MXFP4 experts
// and their biases too). Under gemm_half too, whose chunks' copies are f16 ones: the decode step's stay int8, sized so.
TEST(MixtureOnCpu, PrequantizedExpertInputsAreTheSameNumbers) {
  for (const auto& [preset, type] : {std::pair{"tiny-qwen2moe", ggml::Type::Q8_0}, {"tiny-gpt-oss", ggml::Type::MXFP4}})
    for (const char* numerics : {"int8", "int8x2"})
      for (bool half : {false, true}) {
        TempDir dir;
        synth::write(synth::Options{.preset = preset, .type = type, .seed = 5}, dir / "m.gguf");
        const gguf::File file = gguf::File::open(dir / "m.gguf");
        const model::Model m = model::recognize(file);
        const knobs::Knobs kn =
            knobs::Knobs::from_json({{"numerics", numerics}, {"max_chunk", 16}, {"gemm_half", half}});
        const std::string what = std::string(preset) + " " + numerics + (half ? " gemm_half" : "");
        knobs::Knobs pq = kn;
        pq.gemv_prequant = true;
        const lane::Schedule plain = lane::schedule(file, m, kn, {132, 90});
        const lane::Schedule prequant = lane::schedule(file, m, pq, {132, 90});
        const lane::Form& step = prequant.forms[0];
        ASSERT_EQ(step.rows, 1);
        size_t glu = 0, down = 0, pairs_copies = 0;
        for (const lane::Launch& l : step.launches) {
          if (const auto* g = std::get_if<lane::MoeGlu>(&l.op)) glu += g->xq.has_value();
          if (const auto* d = std::get_if<lane::MoeDown>(&l.op)) down += d->xq.has_value();
          if (const auto* q = std::get_if<lane::QuantizeI8>(&l.op); q && q->rows == int(m.experts_used)) {
            EXPECT_FALSE(q->fragments || q->half) << what << ": the pairs' rows quantized row by row, in int8";
            EXPECT_EQ(step.buffers.at(q->xq).count, lane::quantized_words(pq, q->rows, q->k, false)) << what;
            pairs_copies += q->k == m.expert_ffn;
          }
        }
        EXPECT_EQ(glu, size_t(m.layers)) << what;
        EXPECT_EQ(down, size_t(m.layers)) << what;
        EXPECT_EQ(pairs_copies, size_t(m.layers)) << what;
        std::vector<int32_t> prompt(20);
        std::mt19937 rng(4);
        for (auto& t : prompt) t = int32_t(rng() % m.vocab);
        const reference::Generation a = LaneSim<float>(file, plain).generate(prompt, 4);
        const reference::Generation b = LaneSim<float>(file, prequant).generate(prompt, 4);
        EXPECT_EQ(a.tokens, b.tokens) << what;
        EXPECT_EQ(a.logits, b.logits) << what;
      }
}

// Shapes, formats and knob sets no preset and no hand-picked set has: each case draws a model (llama, qwen2 with its
// biases, qwen3 with its q/k norms, and a third of the time a mixture: qwen3moe, qwen2moe with its shared expert,
// gpt-oss with its sinks and sliding window; 1 to 8 query heads a key/value head, heads 32 to 256 wide, widths that
// are whole 32-blocks but not always whole 256-blocks, so that K-quant files fall back as llama.cpp's do; a quarter of
// them trained on 16,384 positions, their lanes holding 8,192 under the long contexts' knobs), a matrix type, and a
// point of its knob space drawn uniformly (Space::sample), and the plan model must match the reference under it. What a
// hidden checkpoint from another tool would exercise that the presets' shapes do not.
class RandomShapesOnCpu : public ::testing::TestWithParam<int> {};

synth::Preset random_shape(std::mt19937_64& rng, int id) {
  auto pick = [&](auto const& v) { return v[rng() % std::size(v)]; };
  synth::Preset p;
  p.name = "random-shape-" + std::to_string(id);
  p.architecture = pick(std::vector<std::string>{"llama", "qwen2", "qwen3", "llama", "qwen2", "qwen3", "qwen3moe",
                                                 "qwen2moe", "gpt-oss"});
  p.layers = 1 + uint32_t(rng() % 2);
  p.kv_heads = 1 + uint32_t(rng() % 3);
  p.heads = p.kv_heads * (1 + uint32_t(rng() % 8));
  p.head_dim = pick(std::vector<uint32_t>{32, 48, 64, 80, 96, 128, 256});
  while (p.heads * p.head_dim % 32) p.heads += p.kv_heads;  // (o's rows: whole 32-blocks)
  p.d_model = 32 * (4 + uint32_t(rng() % 13));              // 128 .. 512
  p.ffn = 32 * (4 + uint32_t(rng() % 28));                  // 128 .. 1,000
  p.vocab = 260 + uint32_t(rng() % 700);
  p.context = rng() % 4 ? 4096 : 16384;  // (a quarter trained past 4,096: lanes of 8,192 positions, their knobs)
  p.rope_base = pick(std::vector<float>{10000.f, 500000.f, 1000000.f});
  p.norm_eps = pick(std::vector<float>{1e-5f, 1e-6f});
  p.tied_output = rng() % 2;
  if (p.architecture == "llama" && rng() % 2)
    p.rope_scale_factor = 8.f, p.rope_low_freq = 1.f, p.rope_high_freq = 4.f, p.rope_original_context = 1024;
  if (p.architecture.find("moe") != std::string::npos || p.architecture == "gpt-oss") {
    p.experts = 2 + uint32_t(rng() % 7);
    p.experts_used = 1 + uint32_t(rng() % std::min<uint32_t>(p.experts, 4));
    p.expert_ffn = 32 * (2 + uint32_t(rng() % 12));
  }
  p.qkv_bias = p.architecture == "qwen2" || p.architecture == "qwen2moe" || p.architecture == "gpt-oss";
  p.qk_norm = p.architecture == "qwen3" || p.architecture == "qwen3moe";
  if (p.architecture == "qwen2moe") p.shared_ffn = 32 * (2 + uint32_t(rng() % 12));
  if (p.architecture == "gpt-oss") {
    p.tied_output = false;  // (gpt-oss files carry their output matrix)
    p.sliding_window = pick(std::vector<uint32_t>{8, 32, 128});
    p.rope_scale_factor = 32.f, p.rope_original_context = 4096;
  }
  return p;
}

TEST_P(RandomShapesOnCpu, MatchTheReference) {
  const int id = GetParam();
  std::mt19937_64 rng(0x5eed0000u + uint64_t(id));
  synth::Options o;
  o.shape = random_shape(rng, id);
  o.preset = o.shape->name;
  o.seed = 100 + uint64_t(id);
  const char* types[] = {"q8_0", "q4_k_m", "q5_k_m", "q4_0",   "q4_1",   "q5_0",  "q5_1", "q2_k", "q3_k",
                         "q4_k", "q5_k",   "q6_k",   "iq4_nl", "iq4_xs", "mxfp4", "f16",  "bf16"};
  const std::string t = types[rng() % std::size(types)];
  o.mixed = t.size() > 4 && t.substr(4) == "_m";
  o.type = *ggml::parse_type(o.mixed ? t.substr(0, 4) : t);
  TempDir dir;
  synth::write(o, dir / "m.gguf");
  const gguf::File file = gguf::File::open(dir / "m.gguf");
  const model::Model m = model::recognize(file);
  // A mixture's random router flips an expert on a near tie under rounding numerics, and another expert is another
  // function (the mixtures' own tests say so): its draws keep exact numerics (precise, dequant; no compact cache, no
  // f16 GEMMs), which still take every launch of its schedule.
  const int context = m.context > 4096 ? 8192 : 0;
  knobs::Space space = knobs::space(m, {132, 90, context});
  if (m.experts) {
    for (knobs::Domain& d : space.domains) {
      if (d.name == "numerics") d.values = {"precise", "dequant"};
      if (d.name == "kv_cache" || d.name == "gemm_half") d.values.resize(1);
    }
  }
  const knobs::Knobs k = space.sample(rng);
  SCOPED_TRACE(o.shape->architecture + " layers " + std::to_string(o.shape->layers) + " d_model " +
               std::to_string(o.shape->d_model) + " heads " + std::to_string(o.shape->heads) + "/" +
               std::to_string(o.shape->kv_heads) + " x " + std::to_string(o.shape->head_dim) + " ffn " +
               std::to_string(o.shape->ffn) + " vocab " + std::to_string(o.shape->vocab) + " " + t + " " + k.key());
  // (the decode step's own fold spreads a span only past 4 tiles: where the draw has it, decode steps past 300 too)
  const bool folds = k.attn_mma == 2 && k.attn_splits > 1;
  matches_the_reference(o, k.to_json(), folds ? std::vector<int>{6, 300} : std::vector<int>{6, 41}, 0, context);
}

// 48 draws (about 15 s); LT_RANDOM_SHAPES=N draws N for a longer hunt (700 took 4 minutes here, all passing), and
// LT_RANDOM_FIRST=F starts them at draw F (a hunt past the draws earlier hunts ran).
int random_shape_env(const char* name, int otherwise) {
  const char* n = std::getenv(name);
  return n && std::atoi(n) > 0 ? std::atoi(n) : otherwise;
}

INSTANTIATE_TEST_SUITE_P(Draws, RandomShapesOnCpu,
                         ::testing::Range(random_shape_env("LT_RANDOM_FIRST", 0),
                                          random_shape_env("LT_RANDOM_FIRST", 0) +
                                              random_shape_env("LT_RANDOM_SHAPES", 48)));

// Draws that hunts failed, kept in every run once their cause was fixed: 10,768 and 32,407 (the precise rule's ulps,
// session 49), 79,681, 86,385, 92,641 and 93,656 (correct int8 lanes over a q8_0 or bf16 cache refused while the judge
// bound them by the larger source alone; its bounds in quadrature since session 52).
INSTANTIATE_TEST_SUITE_P(Hunted, RandomShapesOnCpu, ::testing::Values(10768, 32407, 79681, 86385, 92641, 93656));

INSTANTIATE_TEST_SUITE_P(DenseTinyPresets, LanePlanOnCpu,
                         ::testing::Combine(::testing::Values("tiny-llama", "tiny-qwen2", "tiny-qwen3"),
                                            ::testing::Range(0, int(std::size(kKnobSets)))));

}  // namespace
}  // namespace lt::test

namespace lt::test {
namespace {

// The gemmas (sandwich norms: each projection's output normed before it joins the residual; GELU; the embedding scaled
// by sqrt(d_model); sliding layers beside global ones; a tied output). gemma3: q/k norms, the sliding layers' own rope
// base beside global ones with linear rope scaling; gemma2: the attention logits and the output logits softcapped.
// tiny-gemma3 / tiny-gemma2 (a sliding layer of window 16, then a global one; tiny-gemma2's caps of 5 bend its logits)
// under every hand-picked set the space allows (no folded norms: they would skip the post norms; the fused gate/up
// launches apply GELU), then points drawn uniformly from the space, on prompts past the window: 6 on the tiny preset, a
// quarter of them in llama.cpp's Q4_K_M mix, and 10 on drawn shapes (1 to 4 query heads a key/value head, heads 64 to
// 256 wide, windows of 8 to 64, 2 or 3 layers global every 2nd or 3rd, with and without scaling; gemma2's caps drawn
// from 3 to 50).
class GemmaOnCpu : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

synth::Preset random_gemma(std::mt19937_64& rng, const std::string& arch, int id) {
  auto pick = [&](auto const& v) { return v[rng() % std::size(v)]; };
  synth::Preset p = synth::preset("tiny-" + arch);
  p.name = "random-" + arch + "-" + std::to_string(id);
  p.layers = 2 + uint32_t(rng() % 2);
  p.kv_heads = 1 + uint32_t(rng() % 2);
  p.heads = p.kv_heads * (1 + uint32_t(rng() % 4));
  p.head_dim = pick(std::vector<uint32_t>{64, 128, 256});
  p.d_model = 32 * (4 + uint32_t(rng() % 9));
  p.ffn = 32 * (4 + uint32_t(rng() % 20));
  p.vocab = 300 + uint32_t(rng() % 600);
  p.sliding_window = pick(std::vector<uint32_t>{8, 16, 64});
  p.sliding_pattern = 2 + uint32_t(rng() % 2);
  p.rope_scale_factor = rng() % 2 ? 8.f : 0.f;
  if (arch == "gemma2")
    p.attn_softcap = pick(std::vector<float>{3.f, 10.f, 50.f}), p.final_softcap = pick(std::vector<float>{3.f, 30.f});
  return p;
}

TEST_P(GemmaOnCpu, MatchesTheReference) {
  const auto& [arch, id] = GetParam();
  synth::Options o{.preset = "tiny-" + arch, .seed = 5};
  const int hand = int(std::size(kKnobSets));
  if (id < hand) {
    TempDir dir;
    synth::write(o, dir / "m.gguf");
    const gguf::File file = gguf::File::open(dir / "m.gguf");
    const knobs::Space space = knobs::space(model::recognize(file), {132, 90});
    const knobs::Knobs k = knobs::Knobs::from_json(kKnobSets[id]);
    if (const std::string why = space.why_invalid(k); !why.empty())
      GTEST_SKIP() << arch << "'s space refuses " << kKnobSets[id].dump() << ": " << why;
    matches_the_reference(o, kKnobSets[id], {5, 23, 77});
    return;
  }
  std::mt19937_64 rng((arch == "gemma3" ? 0x6e33a000u : 0x6e22a000u) + uint64_t(id));
  if (id >= hand + 6) {
    o.shape = random_gemma(rng, arch, id);
    o.preset = o.shape->name;
  }
  if (id % 4 == 0) o.type = ggml::Type::Q4_K, o.mixed = true;
  TempDir dir;
  synth::write(o, dir / "m.gguf");
  const gguf::File file = gguf::File::open(dir / "m.gguf");
  const knobs::Knobs k = knobs::space(model::recognize(file), {132, 90}).sample(rng);
  SCOPED_TRACE(o.preset + " " + k.key());
  matches_the_reference(o, k.to_json(), {6, 41, 90});
}

std::string gemma_case_name(const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(SetsAndDraws, GemmaOnCpu,
                         ::testing::Combine(::testing::Values("gemma2", "gemma3"),
                                            ::testing::Range(0, int(std::size(kKnobSets)) + 16)),
                         gemma_case_name);

// The gemmas' heads, 256 wide, on the tensor cores (attn_mma): the chunks' 64 query rows a block with the queries read
// from shared memory at each use, the decode step's block 2 x 4 warps (each a quarter of each tile, each half of the
// warps half of the value columns), under its own split fold and one split, rope and the append folded in (gemma3's
// q/k norms with them); past the sliding window, gemma2's caps bending the scores. Before sm_90 (163 KiB of shared
// memory a block) the space keeps them off.
TEST(GemmaOnCpu, WideHeadsOnTheTensorCores) {
  EXPECT_EQ(lk_attention_mma_warps(true, 256, 256), 2 * LK_AM_WARPS);  // (two halves of the value columns)
  EXPECT_EQ(lk_attention_mma_ways(true, 256, 256), LK_AM_WARPS);
  EXPECT_EQ(lk_attention_mma_ways(true, 144, 144), LK_AM_WARPS);  // (72-column halves: not whole loads)
  EXPECT_EQ(lk_attention_mma_warps(true, 144, 144), LK_AM_WARPS);
  for (const char* arch : {"gemma2", "gemma3"}) {
    const synth::Preset p = wide_gemma(arch);
    synth::Options o{.preset = p.name, .shape = p, .seed = 9};
    TempDir dir;
    synth::write(o, dir / "m.gguf");
    const gguf::File file = gguf::File::open(dir / "m.gguf");  // (the model points into it)
    const model::Model m = model::recognize(file);
    for (const json& j :
         {wide_step_knobs(), json{{"numerics", "dequant"}, {"kv_cache", "bf16"}, {"attn_mma", 1}, {"max_chunk", 64}},
          json{{"numerics", "dequant"}, {"kv_cache", "f16"}, {"attn_mma", 2}, {"max_chunk", 16}}}) {
      SCOPED_TRACE(std::string(arch) + " " + j.dump());
      const knobs::Knobs k = knobs::Knobs::from_json(j);
      EXPECT_EQ(knobs::space(m, {132, 90}).why_invalid(k), "");
      EXPECT_NE(knobs::space(m, {108, 80}).why_invalid(k), "");
      // (the wide step's own fold spreads a span past 4 tiles: the prompt of 300)
      matches_the_reference(o, j, j == wide_step_knobs() ? std::vector<int>{6, 90, 300} : std::vector<int>{6, 41, 90});
    }
    // A lane of 8,192 positions, its split step folded by a launch of its own (attn_fold_launch).
    json fold = wide_step_knobs();
    fold["attn_splits"] = 4;
    fold["attn_fold_launch"] = true;
    fold["context"] = 8192;
    SCOPED_TRACE(std::string(arch) + " " + fold.dump());
    EXPECT_EQ(knobs::space(m, {132, 90, 8192}).why_invalid(knobs::Knobs::from_json(fold)), "");
    matches_the_reference(o, fold, {6, 90}, 0, 8192);
  }
}

// Every hand-picked set a gemma's space allows is most of them: what it refuses is only the folded norms.
TEST(GemmaOnCpu, TheirSpacesRefuseOnlyTheFoldedNorms) {
  for (const char* preset : {"tiny-gemma2", "tiny-gemma3"}) {
    SCOPED_TRACE(preset);
    TempDir dir;
    synth::write(synth::Options{.preset = preset, .seed = 5}, dir / "m.gguf");
    const gguf::File file = gguf::File::open(dir / "m.gguf");
    const knobs::Space space = knobs::space(model::recognize(file), {132, 90});
    int allowed = 0;
    for (const json& j : kKnobSets) {
      const knobs::Knobs k = knobs::Knobs::from_json(j);
      const bool fused = k.fuse_norm || k.norm_fold;
      const std::string why = space.why_invalid(k);
      EXPECT_EQ(why.empty(), !fused) << j.dump() << ": " << why;
      allowed += why.empty();
    }
    EXPECT_GE(allowed, 20);
  }
}

}  // namespace
}  // namespace lt::test
