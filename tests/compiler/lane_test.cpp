// The lane compiler: its knobs and space, its schedule (the arena packed by liveness, every buffer written before it is
// read), knobs that change the program, the lanes of every dense tiny preset built with nvcc without warnings, and
// the program's refusals that need no GPU.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane.hpp"
#include "compiler/lane_image.hpp"
#include "compiler/lane_output.hpp"
#include "compiler/lane_schedule.hpp"
#include "compiler/lowering.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "compiler/version.hpp"
#include "compiler/wide_heads.hpp"
#include "support/test_support.hpp"

// The lane's own xxh64, held to libxxhash's below.
#include "../kernels/xxh64.cuh"

namespace lt::test {
namespace {

using nlohmann::json;
const char* const kDense[] = {"tiny-llama", "tiny-qwen2", "tiny-qwen3"};

// A synthesized tiny checkpoint per preset, written once for the whole suite.
const std::filesystem::path& checkpoint(const std::string& preset) {
  static TempDir dir;
  static std::map<std::string, std::filesystem::path> made;
  auto it = made.find(preset);
  if (it != made.end()) return it->second;
  synth::Options o;
  o.preset = preset;
  o.seed = 3;
  synth::write(o, dir / (preset + ".gguf"));
  return made[preset] = dir / (preset + ".gguf");
}

struct Loaded {
  gguf::File file;
  model::Model model;
};
Loaded load(const std::string& preset) {
  gguf::File f = gguf::File::open(checkpoint(preset));
  model::Model m = model::recognize(f);
  return Loaded{std::move(f), std::move(m)};
}

knobs::Knobs knobs_of(const json& j) {
  return knobs::Knobs::from_json(j);
}

TEST(Knobs, JsonRoundTripsAndDefaultsFillTheRest) {
  knobs::Knobs k = knobs_of({{"numerics", "precise"}, {"attn_splits", 8}});
  EXPECT_EQ(k.numerics, knobs::Numerics::Precise);
  EXPECT_EQ(k.attn_splits, 8);
  EXPECT_EQ(k.gemv_warps, knobs::Knobs{}.gemv_warps);
  EXPECT_EQ(knobs::Knobs::from_json(k.to_json()), k);
  EXPECT_EQ(k.key(), knobs::Knobs::from_json(json::parse(k.key())).key());
}

TEST(Knobs, BadKnobsAreErrorsThatNameThem) {
  auto message = [](const json& j) {
    try {
      knobs_of(j);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"bogus", 1}}).find("unknown knob \"bogus\""), std::string::npos);
  EXPECT_EQ(message({{"bogus", 1}}).find("did you mean"), std::string::npos);  // (no knob within an edit of it)
  // A typo names the knob it most likely meant (the nearest by edits, within a third of the name's length).
  EXPECT_NE(message({{"attn_split", 2}}).find("did you mean \"attn_splits\""), std::string::npos);
  EXPECT_NE(message({{"gemv_rows_per_wrap", 2}}).find("did you mean \"gemv_rows_per_warp\""), std::string::npos);
  EXPECT_NE(message({{"kvcache", "f16"}}).find("did you mean \"kv_cache\""), std::string::npos);
  const std::string huge = message({{std::string(100000, 'k'), 1}});  // (cut to its first 64 characters, no guess)
  EXPECT_NE(huge.find("(100000 characters)"), std::string::npos) << huge.substr(0, 200);
  EXPECT_LT(huge.size(), 200u);
  EXPECT_NE(message({{"numerics", "fast"}}).find("numerics"), std::string::npos);
  EXPECT_NE(message({{"attn_splits", "4"}}).find("attn_splits"), std::string::npos);
  EXPECT_NE(message({{"cuda_graphs", 1}}).find("cuda_graphs"), std::string::npos);
  EXPECT_NE(message(json::array()).find("object"), std::string::npos);
}

// A retired knob (gemv_pipe, session 36) in a stored configuration reads as absent at the value it took when left
// alone, so that a job's results and a release's manifest written before still load; another value is refused, why
// included. `narrow` takes it the same way.
TEST(Knobs, RetiredKnobsReadAsAbsentAtTheirOldDefault) {
  json stored = knobs::Knobs{}.to_json();
  stored["gemv_pipe"] = 0;
  EXPECT_EQ(knobs::Knobs::from_json(stored).key(), knobs::Knobs{}.key());
  EXPECT_FALSE(knobs::Knobs{}.to_json().contains("gemv_pipe"));
  stored["gemv_pipe"] = 2;
  try {
    knobs::Knobs::from_json(stored);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gemv_pipe was retired"), std::string::npos) << e.what();
  }
  Loaded l = load("tiny-qwen3");
  knobs::Space s = knobs::space(l.model, {132, 90});
  const size_t before = s.size();
  EXPECT_NO_THROW(knobs::narrow(s, {{"gemv_pipe", 0}}));
  EXPECT_EQ(s.size(), before);
  EXPECT_THROW(knobs::narrow(s, {{"gemv_pipe", json::array({0, 1})}}), Error);
  EXPECT_THROW(knobs::narrow(s, {{"gemv_piped", 0}}), Error);
  try {  // (a typo in a job's narrowing names the knob it most likely meant, as a configuration's does)
    knobs::narrow(s, {{"attn_split", 2}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean \"attn_splits\""), std::string::npos) << e.what();
  }
}

// Knob text nested past a few levels is refused while it is read (a hostile file 100,000 levels deep once crashed
// `compile`), as is text that is not JSON; a flat object reads.
TEST(Knobs, ParsingBoundsTheNesting) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THROW(knobs::Knobs::parse(deep, "k.json"), Error);
  try {
    knobs::Knobs::parse(R"({"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": 1}}}}}}}}})", "k.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("k.json nests"), std::string::npos) << e.what();
  }
  EXPECT_THROW(knobs::Knobs::parse("{\"numerics\": ", "k.json"), Error);
  EXPECT_EQ(knobs::Knobs::parse(R"({"numerics": "int8", "max_chunk": 64})", "k.json")["max_chunk"], 64);
}

TEST(Knobs, SpaceChecksDomainsAndConstraints) {
  Loaded l = load("tiny-qwen3");
  knobs::Space s = knobs::space(l.model, {132, 90});
  EXPECT_TRUE(s.why_invalid(knobs::Knobs{}).empty());
  EXPECT_NE(s.why_invalid(knobs_of({{"attn_splits", 3}})).find("outside its domain"), std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"attn_splits", 3}})).find("lane-tune knobs CHECKPOINT"), std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"gemv_warps", 5}})).find("gemv_warps"), std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"numerics", "precise"}, {"kv_cache", "f16"}})).find("precise"),
            std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"attn_splits", 64}})).find("outside its domain"), std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"context", 2048}})).find("outside its domain"), std::string::npos);
  // The walk below counts the knobs of the dense lane's first spaces: the cache type, the attention kernels,
  // norm_fold (and its groups) and glu_groups held at their defaults (the compact caches only leave the precise
  // numerics out, checked above; the folds' rules by Lowering.FoldedNorms* and Lowering.TheShortGlu*, and KnobCount's
  // counts).
  for (auto& d : s.domains)
    if (d.name == "kv_cache" || d.name == "attn_lanes" || d.name == "attn_mma" || d.name == "norm_fold" ||
        d.name == "norm_fold_groups" || d.name == "glu_groups")
      d.values.resize(1);
  size_t product = 1;
  for (const auto& d : s.domains) product *= d.values.size();
  const auto all = s.enumerate();
  // For a 4096-position model: of the 768 settings of numerics, max_chunk, gemm_rows, gemm_prequant, gemv_prequant
  // and gemm_tile, 68 hold with gemm_tile 0 (gemm_rows 32 and gemm_prequant need int8 or int8x2 and chunks of 16 or
  // more, int8's chunks of 256 and 512 need gemm_prequant, gemv_prequant needs int8: 12 + 2 x (4 + 16 + 8)), 2 x 16
  // with gemm_tile 32 or 64 (gemm_prequant and gemm_rows 64: 2 numerics x 4 chunks x 2), 8 with gemm_tile 128 (int8
  // only, and fuse_glu); of the 32 settings of fuse_qkv, fuse_glu, fuse_rope_kv, fuse_rope and side_streams, 17 hold
  // (fuse_rope needs fuse_qkv and fuse_rope_kv, side_streams needs fuse_qkv or fuse_glu off), 7 of them with fuse_glu:
  // (68 + 32) x 17 + 8 x 7 = 1756 of 24576 with gemm_half off; with it on, the int8 GEMMs' knobs at their defaults and
  // not the precise numerics: dequant 4 chunks, int8 and int8x2 4 chunks x gemv_prequant 2, by the 17: 20 x 17 = 340;
  // 2096 of 49152 in all; fuse_norm needs gemv_split 1 (1 of 3): 2/3; pdl_first needs pdl: 3/4.
  EXPECT_EQ(all.size(), product * 2096 / 49152 * 2 / 3 * 3 / 4);
  EXPECT_EQ(s.size(), all.size());
  std::set<std::string> keys;
  for (const auto& k : all) keys.insert(k.key());
  EXPECT_EQ(keys.size(), all.size());
  std::mt19937_64 rng(1);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(s.why_invalid(s.sample(rng)).empty());
  model::Model small = l.model;
  small.context = 8;
  EXPECT_NE(knobs::space(small, {132, 90}).why_invalid(knobs_of({{"max_chunk", 16}})).find("context"),
            std::string::npos);
  EXPECT_THROW(lane::compile(l.file, l.model, knobs_of({{"gemv_rows_per_warp", 3}}), {132, 90}), Error);
}

// The exact draw (sample_exact, sample's fallback where rejection keeps failing) is uniform over the valid points: a
// space cut to a few knobs that rules tie together (the numerics, the chunks, the cache, the attention kernels, the
// fusions), every valid point drawn about as often as the others, and no draw invalid.
TEST(Knobs, ExactDrawsAreValidAndUniform) {
  Loaded l = load("tiny-qwen3");
  knobs::Space s = knobs::space(l.model, {132, 90});
  const std::set<std::string> kept = {"numerics",   "max_chunk", "kv_cache",  "attn_mma",
                                      "attn_lanes", "fuse_qkv",  "fuse_rope", "fuse_rope_kv"};
  for (auto& d : s.domains)
    if (!kept.count(d.name)) d.values.resize(1);
  const auto all = s.enumerate();
  ASSERT_GT(all.size(), 50u);
  ASSERT_LT(all.size(), 1000u);
  std::map<std::string, int> seen;
  for (const auto& k : all) seen[k.key()] = 0;
  std::mt19937_64 rng(7);
  const int per = 100;
  for (const knobs::Knobs& k : s.sample_exact(rng, per * all.size())) {
    auto it = seen.find(k.key());
    ASSERT_NE(it, seen.end()) << "an invalid draw: " << k.key() << " (" << s.why_invalid(k) << ")";
    ++it->second;
  }
  for (const auto& [key, n] : seen) {  // (100 expected: 4.5 standard deviations either side)
    EXPECT_GT(n, per - 45) << key;
    EXPECT_LT(n, per + 45) << key;
  }
  // A Sampler (its tables built once, as a search holds it for its thousands of draws a turn) draws those points, a
  // copy of it too, the space it was built from gone.
  std::mt19937_64 a(3), b(3);
  std::optional<knobs::Sampler> sampler;
  {
    const knobs::Space copy = s;
    sampler.emplace(knobs::Sampler(copy));
  }
  const knobs::Sampler shared = *sampler;
  for (const knobs::Knobs& k : s.sample_exact(a, 50)) EXPECT_EQ(shared.draw(b).key(), k.key());
  // A space with no valid point says so.
  for (auto& d : s.domains) {
    if (d.name == "numerics") d.values = {"precise"};
    if (d.name == "kv_cache") d.values = {"f16"};
  }
  EXPECT_THROW(s.sample_exact(rng), Error);
  EXPECT_THROW(s.sample(rng), Error);
  EXPECT_THROW(knobs::Sampler{s}, Error);
}

// Every step-local buffer is written by a launch before a launch reads it, and no two buffers that are live at once
// share a byte of the arena.
void check_form(const lane::Schedule& p, const lane::Form& f) {
  std::set<std::string> written;
  for (const lane::Launch& l : f.launches) {
    for (const std::string& r : l.reads)
      if (f.buffers.count(r))
        EXPECT_TRUE(written.count(r)) << "form " << f.rows << " reads " << r << " unwritten";
      else
        EXPECT_TRUE(p.carried.count(r)) << r << " is neither step-local nor carried";
    for (const std::string& w : l.writes) written.insert(w);
  }
  // The launches of a group (side streams) run side by side: none writes what another of them reads or writes.
  for (int i = 0; i < int(f.launches.size()); ++i) {
    const auto [first, last] = lane::group_of(f, i);
    for (int j = first; j <= last; ++j)
      for (const std::string& w : f.launches[i].writes) {
        if (j == i) continue;
        const auto& o = f.launches[j];
        EXPECT_EQ(std::count(o.reads.begin(), o.reads.end(), w) + std::count(o.writes.begin(), o.writes.end(), w), 0)
            << "launches " << i << " and " << j << " of form " << f.rows << " share " << w << " side by side";
      }
  }
  for (const auto& [a, sa] : f.slots) {
    EXPECT_LE(sa.offset + sa.bytes, f.arena_bytes);
    EXPECT_GE(sa.bytes, p.bytes_of(f.buffers.at(a)));
    for (const auto& [b, sb] : f.slots) {
      if (a >= b) continue;
      const bool live_together = sa.first <= sb.last && sb.first <= sa.last;
      const bool share = sa.offset < sb.offset + sb.bytes && sb.offset < sa.offset + sa.bytes;
      EXPECT_FALSE(live_together && share) << a << " and " << b << " overlap in form " << f.rows;
    }
  }
}

TEST(Schedule, ArenaPacksByLivenessAndEveryBufferIsWrittenFirst) {
  for (const char* preset : kDense) {
    Loaded l = load(preset);
    for (const json& k :
         {json{{"numerics", "dequant"}}, json{{"numerics", "precise"}, {"attn_splits", 1}},
          json{{"max_chunk", 64}, {"attn_splits", 16}},
          json{{"fuse_qkv", true}, {"fuse_glu", true}, {"fuse_rope_kv", true}, {"max_chunk", 64}},
          json{{"side_streams", true}, {"max_chunk", 64}, {"numerics", "int8"}},
          json{{"fuse_qkv", true}, {"fuse_rope_kv", true}, {"fuse_rope", true}, {"side_streams", true}},
          json{{"numerics", "int8"}, {"gemv_prequant", true}, {"norm_fold", true}, {"fuse_glu", true}}}) {
      lane::Schedule p = lane::schedule(l.file, l.model, knobs_of(k), {132, 90});
      ASSERT_EQ(p.forms.front().rows, 1);
      if (knobs_of(k).side_streams) {
        EXPECT_TRUE(std::any_of(p.forms[0].launches.begin(), p.forms[0].launches.end(),
                                [](const lane::Launch& x) { return x.stream > 0; }))
            << "side streams used in " << k.dump();
      }
      size_t total = 0;
      for (const lane::Form& f : p.forms) {
        check_form(p, f);
        size_t sum = 0;
        for (const auto& [n, s] : f.slots) sum += s.bytes;
        EXPECT_LT(f.arena_bytes, sum) << "liveness packing reuses the arena";
        total = std::max(total, f.arena_bytes);
      }
      EXPECT_EQ(p.arena_bytes, total);
      EXPECT_EQ(p.forms.size(), 1 + knobs_of(k).chunks().size());
    }
  }
}

// A mixture's forms too: every buffer (the expert ids, the groups, the gathered rows) written before it is read, the
// arena packed by liveness; the shared expert's GLU beside the route under side streams (qwen2moe).
TEST(Schedule, AMixturesBuffersAreWrittenFirstAndPackedByLiveness) {
  for (const char* preset : {"tiny-moe", "tiny-qwen2moe", "tiny-gpt-oss"}) {
    Loaded l = load(preset);
    for (const json& k :
         {json{{"max_chunk", 64}}, json{{"numerics", "int8"}, {"max_chunk", 16}, {"fuse_norm", true}},
          json{{"side_streams", true}, {"max_chunk", 16}, {"gemv_prequant", true}, {"numerics", "int8"}}}) {
      const lane::Schedule p = lane::schedule(l.file, l.model, knobs_of(k), {132, 90});
      for (const lane::Form& f : p.forms) check_form(p, f);
      if (knobs_of(k).side_streams && l.model.shared_ffn) {
        EXPECT_TRUE(std::any_of(p.forms[0].launches.begin(), p.forms[0].launches.end(),
                                [](const lane::Launch& x) { return x.stream > 0 && x.kind == "gemv"; }))
            << preset << " " << k.dump();
      }
    }
  }
}

// The fusions that do not apply to a mixture without a shared expert are refused, saying why: fuse_glu (its experts
// pair their gate and up always), side_streams with fuse_qkv (no two launches of a step independent). A mixture with
// a shared expert takes both (its shared expert's gate and up).
TEST(Knobs, AMixtureRefusesTheFusionsThatDoNotApplyToIt) {
  const knobs::Space moe = knobs::space(load("tiny-moe").model, {132, 90});
  EXPECT_NE(moe.why_invalid(knobs_of({{"fuse_glu", true}})).find("fuse_glu needs a dense FFN or a shared expert"),
            std::string::npos);
  EXPECT_NE(moe.why_invalid(knobs_of({{"fuse_qkv", true}, {"side_streams", true}})).find("side_streams needs"),
            std::string::npos);
  EXPECT_EQ(moe.why_invalid(knobs_of({{"fuse_qkv", true}, {"fuse_norm", true}, {"numerics", "int8"}})), "");
  const knobs::Space shared = knobs::space(load("tiny-qwen2moe").model, {132, 90});
  EXPECT_EQ(shared.why_invalid(knobs_of({{"fuse_glu", true}})), "");
  EXPECT_EQ(shared.why_invalid(knobs_of({{"fuse_qkv", true}, {"side_streams", true}})), "");
}

// size() counts by the knobs each rule lists as read: every rule's list is checked against its verdicts (no unlisted
// knob changes one), and the count against a walk over every point of several slices of the spaces (the knobs outside
// a slice held at one value).
TEST(Knobs, TheCountByTheRulesReadsIsTheWalks) {
  for (const char* preset : {"tiny-qwen3", "tiny-moe", "tiny-qwen2moe", "tiny-gpt-oss"}) {
    const knobs::Space s = knobs::space(load(preset).model, {132, 90});
    EXPECT_EQ(knobs::unlisted_reads(s, 7, 300), "") << preset;
    const std::vector<std::vector<std::string>> slices = {
        {"numerics", "max_chunk", "kv_cache", "attn_mma", "attn_heads", "attn_lanes", "gemm_half", "moe_tile"},
        {"numerics", "max_chunk", "gemm_rows", "gemm_prequant", "gemv_prequant", "gemm_tile", "fuse_glu", "gemm_half"},
        {"fuse_qkv", "fuse_glu", "fuse_rope_kv", "fuse_rope", "side_streams", "gemv_rows_per_warp", "fuse_norm",
         "gemv_split", "pdl", "cuda_graphs", "numerics"}};
    for (const auto& slice : slices) {
      knobs::Space cut = s;
      for (auto& d : cut.domains)
        if (std::find(slice.begin(), slice.end(), d.name) == slice.end()) d.values.resize(1);
      size_t walked = 0;
      cut.each([&](const knobs::Knobs&) { ++walked; });
      EXPECT_EQ(cut.size(), walked) << preset << " " << slice.front();
    }
  }
  // A mistake in a rule's list shows: a space whose rules' lists were right counts the same whatever the hubs'
  // values; here a point the count must leave out (int8's chunks of 512 without their GEMMs) is left out.
  knobs::Space one = knobs::space(load("tiny-qwen3").model, {132, 90});
  for (auto& d : one.domains) {
    if (d.name == "numerics") d.values = {"int8"};
    else if (d.name == "max_chunk") d.values = {512};
    else if (d.name != "gemm_prequant" && d.name != "gemm_half") d.values.resize(1);
  }
  EXPECT_EQ(one.size(), 2u);  // gemm_prequant or gemm_half, not neither nor both
}

// The grouped expert GEMM's tile is a knob of a mixture's space only, and only with gemm_half (whose GEMM it shapes);
// the count by parts stays the walk's.
TEST(Knobs, TheExpertTileIsAMixturesKnobUnderGemmHalf) {
  const auto values = [](const knobs::Space& s) {
    for (const auto& d : s.domains)
      if (d.name == "moe_tile") return json(d.values);
    return json();
  };
  knobs::Space moe = knobs::space(load("tiny-moe").model, {132, 90});
  EXPECT_EQ(values(moe), json({0, 64, 128}));
  EXPECT_EQ(values(knobs::space(load("tiny-qwen3").model, {132, 90})), json({0}));
  EXPECT_NE(knobs::space(load("tiny-qwen3").model, {132, 90})
                .why_invalid(knobs_of({{"moe_tile", 64}}))
                .find("outside its domain"),
            std::string::npos);
  EXPECT_NE(moe.why_invalid(knobs_of({{"moe_tile", 128}})).find("moe_tile 128 needs gemm_half"), std::string::npos);
  EXPECT_EQ(moe.why_invalid(knobs_of({{"moe_tile", 128}, {"gemm_half", true}, {"max_chunk", 64}})), "");
  EXPECT_NE(moe.why_invalid(knobs_of({{"moe_tile", 32}, {"gemm_half", true}, {"max_chunk", 64}})).find("domain"),
            std::string::npos);
  for (auto& d : moe.domains)  // (a smaller walk: the knobs the count's parts do not touch held)
    if (d.name != "numerics" && d.name != "max_chunk" && d.name != "gemm_half" && d.name != "moe_tile" &&
        d.name != "gemm_tile" && d.name != "gemm_prequant")
      d.values.resize(1);
  size_t walked = 0;
  moe.each([&](const knobs::Knobs&) { ++walked; });
  EXPECT_EQ(moe.size(), walked);
  EXPECT_GT(walked, 0u);
}

TEST(Schedule, UnsupportedModelsAreClearErrors) {
  Loaded l = load("tiny-qwen3");
  model::Model m = l.model;
  gguf::TensorInfo iq2 = *m.layer[0].wq;
  iq2.type = ggml::Type::IQ2_XXS;
  m.layer[0].wq = &iq2;
  try {
    lane::schedule(l.file, m, {}, {132, 90});
    FAIL() << "an iq2_xxs matrix scheduled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_q.weight"), std::string::npos) << e.what();
  }
}

// The sidecar's rope tables are the reference's rotation: under YaRN (tiny-gpt-oss: factor 32) the model's blended
// frequencies, and its attention factor 1 + 0.1 ln 32 on cosine and sine alike, in the lane's activation type.
TEST(Schedule, TheRopeTablesCarryYarnsFrequenciesAndAttentionFactor) {
  Loaded l = load("tiny-gpt-oss");
  ASSERT_EQ(l.model.scaling.kind, model::RopeScaling::Kind::Yarn);
  const double factor = l.model.rope_attention_factor();
  EXPECT_NEAR(factor, 1.0 + 0.1 * std::log(32.0), 1e-12);
  const std::vector<double> inv = l.model.rope_inv_freq();
  for (const char* numerics : {"dequant", "precise"}) {
    const lane::Schedule p = lane::schedule(l.file, l.model, knobs_of({{"numerics", numerics}}), {132, 90});
    ASSERT_EQ(p.side.size(), 2u);
    const size_t half = l.model.head_dim / 2;
    for (size_t pos : {size_t{1}, size_t{77}, size_t(p.ctx - 1)})
      for (size_t j : {size_t{0}, half / 2, half - 1}) {
        const double th = double(pos) * inv[j];
        const size_t at = pos * half + j;
        double c, s;
        if (p.act_bytes() == 8) {
          std::memcpy(&c, p.sidecar.data() + p.side[0].offset + at * 8, 8);
          std::memcpy(&s, p.sidecar.data() + p.side[1].offset + at * 8, 8);
        } else {
          float cf, sf;
          std::memcpy(&cf, p.sidecar.data() + p.side[0].offset + at * 4, 4);
          std::memcpy(&sf, p.sidecar.data() + p.side[1].offset + at * 4, 4);
          c = cf, s = sf;
        }
        EXPECT_EQ(c, p.act_bytes() == 8 ? std::cos(th) * factor : double(float(std::cos(th) * factor))) << pos << j;
        EXPECT_EQ(s, p.act_bytes() == 8 ? std::sin(th) * factor : double(float(std::sin(th) * factor))) << pos << j;
      }
  }
}

// A model's own switches in what every program and kernel module starts with: gemma2's caps as exact float literals
// (its attention's and its output's, 5 each in tiny-gemma2; a drawn cap that no short decimal holds reads back the
// same), GELU for both gemmas, none of them for a llama; the lane's head and the image's the same text.
TEST(Emit, TheModelsSwitchesAreInTheHead) {
  auto head_of = [](const gguf::File& f, const model::Model& m) {
    return lane::image(f, m, knobs_of({{"numerics", "dequant"}}), {132, 90}).head;
  };
  auto define = [](const std::string& head, const std::string& name) -> std::optional<std::string> {
    const size_t at = head.find("#define " + name + " ");
    if (at == std::string::npos) return std::nullopt;
    const size_t from = at + name.size() + 9;
    return head.substr(from, head.find('\n', from) - from);
  };
  Loaded g2 = load("tiny-gemma2");
  const std::string h2 = head_of(g2.file, g2.model);
  ASSERT_TRUE(define(h2, "LK_ATTN_SOFTCAP") && define(h2, "LK_FINAL_SOFTCAP") && define(h2, "LK_GELU")) << h2;
  EXPECT_EQ(std::strtof(define(h2, "LK_ATTN_SOFTCAP")->c_str(), nullptr), 5.f);
  EXPECT_EQ(define(h2, "LK_FINAL_SOFTCAP")->back(), 'f');  // (a float literal: the kernels' arithmetic stays f32)
  const lane::Program program = lane::compile(g2.file, g2.model, knobs_of({{"numerics", "dequant"}}), {132, 90});
  EXPECT_NE(program.cu.find(h2), std::string::npos);
  synth::Preset odd = synth::preset("tiny-gemma2");
  odd.attn_softcap = 1.2345678f, odd.final_softcap = 33.3f;  // (more digits than six: exact only as hex)
  TempDir dir;
  synth::write(synth::Options{.preset = odd.name, .shape = odd, .seed = 3}, dir / "m.gguf");
  const gguf::File f = gguf::File::open(dir / "m.gguf");
  const std::string hd = head_of(f, model::recognize(f));
  EXPECT_EQ(std::strtof(define(hd, "LK_ATTN_SOFTCAP")->c_str(), nullptr), 1.2345678f) << hd;
  EXPECT_EQ(std::strtof(define(hd, "LK_FINAL_SOFTCAP")->c_str(), nullptr), 33.3f) << hd;
  Loaded g3 = load("tiny-gemma3"), llama = load("tiny-llama");
  const std::string h3 = head_of(g3.file, g3.model);
  EXPECT_TRUE(define(h3, "LK_GELU"));
  EXPECT_FALSE(define(h3, "LK_ATTN_SOFTCAP") || define(h3, "LK_FINAL_SOFTCAP")) << h3;
  const std::string hl = head_of(llama.file, llama.model);
  EXPECT_FALSE(define(hl, "LK_GELU") || define(hl, "LK_ATTN_SOFTCAP") || define(hl, "LK_FINAL_SOFTCAP")) << hl;
}

// gemma3's sliding layers rope by frequencies of their own: beside a global layer from a second pair of tables that
// their Rope launches name (the global layer's the model's, scaled), and where every layer slides from the model's
// pair, holding the sliding frequencies (a program declares no table no launch reads).
TEST(Schedule, Gemma3sSlidingLayersReadTheirOwnRopeTables) {
  auto cosine = [](const lane::Schedule& p, size_t table, size_t pos, size_t j) {
    float c;
    std::memcpy(&c, p.sidecar.data() + p.side[2 * table].offset + (pos * (p.model.head_dim / 2) + j) * 4, 4);
    return c;
  };
  auto tables_read = [](const lane::Schedule& p) {
    std::set<int> t;
    for (const lane::Form& f : p.forms)
      for (const lane::Launch& x : f.launches)
        if (const auto* r = std::get_if<lane::Rope>(&x.op)) t.insert(r->table);
    return t;
  };
  Loaded l = load("tiny-gemma3");  // (a sliding layer, then a global one)
  ASSERT_TRUE(l.model.layer[0].sliding && !l.model.layer[1].sliding);
  const lane::Schedule p = lane::schedule(l.file, l.model, knobs_of({{"numerics", "dequant"}}), {132, 90});
  ASSERT_EQ(p.side.size(), 4u);
  EXPECT_EQ(p.side[2].name, "c_rope_cos_swa");
  EXPECT_EQ(tables_read(p), (std::set<int>{0, 1}));
  const std::vector<double> global = l.model.rope_inv_freq(), local = l.model.rope_inv_freq(true);
  EXPECT_NE(global[3], local[3]);
  EXPECT_EQ(cosine(p, 0, 77, 3), float(std::cos(77 * global[3])));
  EXPECT_EQ(cosine(p, 1, 77, 3), float(std::cos(77 * local[3])));
  // Every layer sliding (global every 3rd layer, 2 layers): one pair, the sliding layers'.
  synth::Preset all = synth::preset("tiny-gemma3");
  all.sliding_pattern = 3;
  TempDir dir;
  synth::write(synth::Options{.preset = all.name, .shape = all, .seed = 3}, dir / "m.gguf");
  const gguf::File f = gguf::File::open(dir / "m.gguf");
  const model::Model m = model::recognize(f);
  const lane::Schedule q = lane::schedule(f, m, knobs_of({{"numerics", "dequant"}}), {132, 90});
  ASSERT_EQ(q.side.size(), 2u);
  EXPECT_EQ(tables_read(q), std::set<int>{0});
  EXPECT_EQ(cosine(q, 0, 77, 3), float(std::cos(77 * local[3])));
}

// Under side_streams a launch with a last-block tail (its kernel counts the launch's blocks in one device counter: the
// projection with the folded norm, the fused q/k/v projection with rope) runs alone: on the step's stream, no side
// launch in its group, while the launches around it still go side by side.
TEST(Schedule, ALaunchWithALastBlockTailRunsAloneOnItsStream) {
  for (const char* preset : kDense) {
    Loaded l = load(preset);
    const json k = {{"side_streams", true}, {"fuse_norm", true}, {"fuse_qkv", true},
                    {"fuse_rope_kv", true}, {"fuse_rope", true}, {"max_chunk", 16}};
    const lane::Schedule p = lane::schedule(l.file, l.model, knobs_of(k), {132, 90});
    for (const lane::Form& f : p.forms) {
      int tailed = 0, side = 0;
      for (int i = 0; i < int(f.launches.size()); ++i) {
        const lane::Launch& x = f.launches[i];
        side += x.stream > 0;
        if (!std::holds_alternative<lane::GemvNorm>(x.op) && !std::holds_alternative<lane::GemvRope>(x.op)) continue;
        ++tailed;
        EXPECT_EQ(x.stream, 0) << preset << ": " << x.kind << " (launch " << i << " of form " << f.rows << ")";
        EXPECT_EQ(lane::group_of(f, i), std::make_pair(i, i))
            << preset << ": " << x.kind << " (launch " << i << " of form " << f.rows << ") shares its group";
      }
      // Each layer's q/k/v with rope and o with the norm, each layer's down but the last's with the next norm.
      EXPECT_EQ(tailed, 3 * int(l.model.layers) - 1) << preset << ", form " << f.rows;
      EXPECT_GT(side, 0) << preset << ", form " << f.rows;  // gate and up, side by side
    }
  }
}

// The same rule where only the rule keeps a tailed launch alone (in a real schedule its data dependences do too): a
// made-up form whose launches all depend on nothing but x, each writing its own buffer.
TEST(Schedule, AssigningStreamsKeepsATailedLaunchAloneAmongIndependentOnes) {
  const auto launch = [](lane::Op op, const std::string& kind, const std::string& out) {
    lane::Launch l;
    l.op = std::move(op);
    l.reads = {"x"};
    l.writes = {out};
    l.kind = kind;
    l.output = out;
    return l;
  };
  lane::Form f;
  f.launches = {launch(lane::Gemv{}, "gemv", "a"), launch(lane::GemvNorm{}, "gemv_norm", "b"),
                launch(lane::Gemv{}, "gemv", "c"), launch(lane::GemvRope{}, "gemv_qkv_rope", "d"),
                launch(lane::Gemv{}, "gemv", "e"), launch(lane::Gemv{}, "gemv", "f")};
  lane::assign_streams(f);
  for (int i : {1, 3}) {
    EXPECT_EQ(f.launches[i].stream, 0) << f.launches[i].kind << " (launch " << i << ")";
    EXPECT_EQ(lane::group_of(f, i), std::make_pair(i, i))
        << f.launches[i].kind << " (launch " << i << ") shares its group";
  }
  std::vector<int> streams;
  for (const lane::Launch& l : f.launches) streams.push_back(l.stream);
  // Alone: the tailed launches and the launches just before them; the last two, untailed, side by side.
  EXPECT_EQ(streams, (std::vector<int>{0, 0, 0, 0, 0, 1}));
}

// The lane's caches hold the model's context up to 4,096 positions: a model trained on more is scheduled exactly as
// one trained on 4,096 (the caches, the generated run, the prompt, the rope tables), one trained on fewer for its own.
TEST(Schedule, AContextAbove4096IsCappedAt4096) {
  Loaded l = load("tiny-qwen3");
  const auto with_context = [&](uint32_t context) {
    model::Model m = l.model;
    m.context = context;
    return m;
  };
  const lane::Schedule at = lane::schedule(l.file, with_context(4096), {}, {132, 90});
  EXPECT_EQ(at.ctx, 4096);
  for (uint32_t context : {4097u, 8192u, 131072u}) {
    const model::Model m = with_context(context);
    EXPECT_EQ(knobs::lane_context(m, {}), 4096) << context;
    const lane::Schedule p = lane::schedule(l.file, m, {}, {132, 90});
    EXPECT_EQ(p.ctx, 4096) << context;
    ASSERT_EQ(p.carried.size(), at.carried.size());
    for (const auto& [name, b] : at.carried) EXPECT_EQ(p.carried.at(name).count, b.count) << name << " at " << context;
    EXPECT_TRUE(p.sidecar == at.sidecar) << context;
    EXPECT_EQ(p.arena_bytes, at.arena_bytes) << context;
  }
  const lane::Schedule small = lane::schedule(l.file, with_context(100), {}, {132, 90});
  EXPECT_EQ(small.ctx, 100);
  EXPECT_EQ(small.carried.at("gen").count, 100u);
  EXPECT_EQ(small.carried.at("kc0").count * 4096, at.carried.at("kc0").count * 100);
  EXPECT_EQ(small.sidecar.size() * 4096, at.sidecar.size() * 100);
}

// Under --device-bytes the program moves matrices to host memory in the schedule's order: every matrix of the model
// once, largest (as uploaded) first, matrices of one size in the model's order (the embedding, the output, then layer
// by layer q, k, v, o, gate, up, down). A matrix's size as uploaded is its size in the checkpoint, each of its arrays
// rounded up to 256 bytes (Q8_0's 34-byte blocks split into int8 rows and f16 scales).
TEST(Schedule, MatricesMoveToHostMemoryLargestFirst) {
  for (const char* preset : kDense) {
    Loaded l = load(preset);
    const model::Model& m = l.model;
    std::vector<std::string> order = {m.token_embd->name, m.output->name};
    for (const model::Layer& L : m.layer)
      for (const gguf::TensorInfo* t : {L.wq, L.wk, L.wv, L.wo, L.w_gate, L.w_up, L.w_down}) order.push_back(t->name);
    std::map<std::string, size_t> rank;
    for (const std::string& n : order) rank.try_emplace(n, rank.size());
    const lane::Schedule p = lane::schedule(l.file, m, {}, {132, 90});
    std::set<std::string> got;
    for (const lane::Matrix& x : p.matrices) {
      got.insert(x.tensor->name);
      EXPECT_GE(x.device_bytes(), x.tensor->bytes) << x.tensor->name;
      EXPECT_LT(x.device_bytes(), x.tensor->bytes + 2 * 256) << x.tensor->name;
    }
    EXPECT_EQ(got.size(), p.matrices.size()) << preset;
    EXPECT_EQ(got, (std::set<std::string>(order.begin(), order.end()))) << preset;
    std::set<uint64_t> sizes;
    for (size_t i = 0; i < p.matrices.size(); ++i) {
      const lane::Matrix& x = p.matrices[i];
      sizes.insert(x.device_bytes());
      if (i == 0) continue;
      const lane::Matrix& before = p.matrices[i - 1];
      EXPECT_GE(before.device_bytes(), x.device_bytes()) << preset << ": " << before.name << " before " << x.name;
      if (before.device_bytes() == x.device_bytes()) {
        EXPECT_LT(rank.at(before.tensor->name), rank.at(x.tensor->name))
            << preset << ": " << before.name << ", " << x.name;
      }
    }
    EXPECT_GE(sizes.size(), 3u) << preset;  // (the order is not the model's by chance)
  }
}

// The program emitted under `j`.
std::string program(const Loaded& l, const json& j) {
  return lane::compile(l.file, l.model, knobs_of(j), {132, 90}).cu;
}

TEST(Emit, EveryKnobChangesTheProgram) {
  Loaded l = load("tiny-qwen3");
  const std::string base = program(l, json::object());
  const knobs::Space s = knobs::space(l.model, {132, 90});
  const json defaults = knobs::Knobs{}.to_json();
  for (const auto& d : s.domains)
    for (const json& v : d.values) {
      if (v == defaults[d.name]) continue;
      // A knob that needs others (gemm_rows, gemm_prequant, gemv_prequant and norm_fold: the int8 numerics, norm_fold
      // gemv_prequant too, norm_fold_groups norm_fold; int8's chunks of 256: gemm_prequant; fuse_rope: the fused q/k/v
      // and rope_kv; pdl_first: pdl) is tried beside them.
      json with = {{d.name, v}}, without = json::object();
      if (d.name == "gemm_rows" || d.name == "gemm_prequant" || d.name == "gemv_prequant" || d.name == "gemm_tile" ||
          d.name == "norm_fold" || d.name == "norm_fold_groups")
        with["numerics"] = without["numerics"] = "int8";
      if (d.name == "norm_fold" || d.name == "norm_fold_groups") with["gemv_prequant"] = without["gemv_prequant"] = true;
      if (d.name == "norm_fold_groups") with["norm_fold"] = without["norm_fold"] = true;
      if (d.name == "glu_groups") {
        with["numerics"] = without["numerics"] = "int8";
        with["gemv_prequant"] = without["gemv_prequant"] = with["fuse_glu"] = without["fuse_glu"] = true;
      }
      if (d.name == "gemm_tile")
        with["gemm_prequant"] = without["gemm_prequant"] = with["fuse_glu"] = without["fuse_glu"] = true;
      if (d.name == "fuse_rope")
        with["fuse_qkv"] = without["fuse_qkv"] = with["fuse_rope_kv"] = without["fuse_rope_kv"] = true;
      if (d.name == "attn_mma") with["kv_cache"] = without["kv_cache"] = "f16";
      if (d.name == "pdl_first") with["pdl"] = without["pdl"] = true;
      ASSERT_EQ(s.why_invalid(knobs_of(with)), "") << with.dump();
      EXPECT_NE(program(l, with), program(l, without)) << d.name << " = " << v.dump() << " changes nothing";
    }
  // How: the numbers the program computes in, the GEMV's shape, the attention's splits and fold, the graphs, the
  // forms.
  EXPECT_NE(program(l, {{"numerics", "precise"}}).find("typedef double lk_act;"), std::string::npos);
  EXPECT_NE(program(l, {{"gemv_rows_per_warp", 4}}).find("lk_gemv<lk_q8, 4, 1>"), std::string::npos);
  EXPECT_NE(base.find("#define LK_KV 0"), std::string::npos);
  EXPECT_NE(program(l, {{"kv_cache", "q8_0"}}).find("#define LK_KV 3"), std::string::npos);
  EXPECT_NE(program(l, {{"attn_lanes", true}}).find("lk_attention_lanes<2, 4><<<"), std::string::npos);
  EXPECT_EQ(base.find("lk_attention_lanes<2, 4><<<"), std::string::npos);
  EXPECT_NE(program(l, {{"gemv_warps", 4}}).find(", 128, 0, st>>>(w_"), std::string::npos);
  EXPECT_EQ(program(l, {{"attn_splits", 1}}).find("lk_attention_fold<"), std::string::npos);
  EXPECT_NE(base.find("lk_attention_fold<"), std::string::npos);
  EXPECT_NE(program(l, {{"cuda_graphs", false}}).find("GRAPHS = false"), std::string::npos);
  EXPECT_EQ(program(l, {{"max_chunk", 1}}).find("step2_0"), std::string::npos);
  EXPECT_NE(program(l, {{"max_chunk", 64}}).find("step64_0"), std::string::npos);
  const std::string qkv = program(l, {{"fuse_qkv", true}});
  EXPECT_NE(qkv.find("lk_gemv_parts<lk_q8, 1, 1><<<"), std::string::npos);
  EXPECT_EQ(qkv.find("lk_gemv<lk_q8, 1, 1><<<64, 256, 0, st>>>(w_blk_0_attn_q"), std::string::npos);
  const std::string glu = program(l, {{"fuse_glu", true}});
  EXPECT_NE(glu.find("lk_gemv_glu<lk_q8, 1, 1><<<"), std::string::npos);
  EXPECT_EQ(glu.find("lk_swiglu<<<"), std::string::npos);
  EXPECT_NE(program(l, {{"gemv_split", 2}}).find("lk_gemv_split<lk_q8, 1, 1, 2><<<128, 256"), std::string::npos);
  const std::string rope = program(l, {{"fuse_rope_kv", true}});
  EXPECT_NE(rope.find("lk_rope<true, true, true, 2><<<dim3(2, 1), 128"), std::string::npos);   // 4 q, 2 k, 2 v heads
  EXPECT_NE(base.find("lk_rope<true, true, false, 2><<<dim3(2, 1), 128"), std::string::npos);  // a warp a head
  EXPECT_EQ(rope.find("lk_kv_append<<<"), std::string::npos);
  // The int8 numerics: the words an activation takes, and the chunks of 16 rows and more on the tensor cores (the
  // 64-row chunk's projections one launch of 64 rows each; the fused gate/up as the GEMM's GLU).
  const std::string i8 = program(l, {{"numerics", "int8"}, {"max_chunk", 64}, {"fuse_glu", true}});
  EXPECT_NE(i8.find("#define LK_INT8 1"), std::string::npos);
  EXPECT_NE(program(l, {{"numerics", "int8x2"}}).find("#define LK_INT8 2"), std::string::npos);
  EXPECT_NE(program(l, {{"numerics", "int8"}, {"gemm_rows", 32}})
                .find("lk_gemm_i8<16, false><<<16, 128, 0, st>>>(w_blk_0_attn_q"),
            std::string::npos);  // q's 512 rows in blocks of 32
  EXPECT_NE(i8.find("lk_gemm_i8<64, false><<<"), std::string::npos);
  EXPECT_NE(i8.find("lk_gemm_i8<32, true><<<"), std::string::npos);
  EXPECT_NE(i8.find("lk_gemv<lk_q8, 1, 1><<<"), std::string::npos);  // decode: dp4a in the GEMV
  EXPECT_NE(base.find("#define LK_INT8 0"), std::string::npos);
  // The norm folded into the o and down projections: in decode the GEMV with the tail (no add_norm launch but the
  // output's); in chunks of more than 8 rows (slabs) the GEMV's launches and then the norm's.
  const std::string fn = program(l, {{"fuse_norm", true}});
  EXPECT_NE(fn.find("lk_gemv_norm<lk_q8, 1, 1><<<"), std::string::npos);
  EXPECT_NE(fn.find("lk_norm_tail{"), std::string::npos);
  EXPECT_NE(fn.find("lk_gemv<lk_q8, 1, 8><<<"), std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"fuse_norm", true}, {"gemv_split", 2}})).find("gemv_split"), std::string::npos);
  // A decode attention block's query heads: the group of 2 (2 blocks a split) or 1 (4 blocks).
  EXPECT_NE(base.find("lk_attention<2, 4, 4><<<dim3(2, 4, 1), 128, " + std::to_string(lane::attention_smem(4, 2, 4))),
            std::string::npos);
  EXPECT_NE(program(l, {{"attn_heads", 1}})
                .find("lk_attention<1, 4, 4><<<dim3(4, 4, 1), 128, " + std::to_string(lane::attention_smem(4, 1, 4))),
            std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"attn_heads", 4}})).find("outside its domain"), std::string::npos);
  // Rope folded into the fused q/k/v projection: in decode its tail (no rope launch), in 16-row chunks (slabs) the
  // projection's launches and then rope's.
  const std::string fr =
      program(l, {{"fuse_qkv", true}, {"fuse_rope_kv", true}, {"fuse_rope", true}, {"max_chunk", 16}});
  EXPECT_NE(fr.find("lk_gemv_parts_rope<lk_q8, 1, 1, true, true, 2><<<128, 256, 0, st>>>"), std::string::npos);
  const std::string decode =
      fr.substr(fr.find("static void step1_0"), fr.find("static void step16_0") - fr.find("static void step1_0"));
  EXPECT_EQ(decode.find("lk_rope<"), std::string::npos);
  EXPECT_NE(fr.find("lk_rope<true, true, true, 2><<<dim3(2, 16)"), std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"fuse_rope", true}})).find("fuse_qkv"), std::string::npos);
  // Side streams: q, k and v (and gate and up) side by side, forked from and joined to the step's stream.
  const std::string ss = program(l, {{"side_streams", true}});
  EXPECT_NE(ss.find("lk_side_init();"), std::string::npos);
  EXPECT_NE(
      ss.find(
          "  lk_fork(st, 2);\n  lk_before(st, ev, 1, 2);\n  lk_gemv<lk_q8, 1, 1><<<64, 256, 0, st>>>(w_blk_0_attn_q"),
      std::string::npos);
  EXPECT_NE(ss.find("  {\n  cudaStream_t st = lk_side[0];\n  lk_before(st, ev, 1, 3);\n  lk_gemv<lk_q8, 1, 1><<<32, "
                    "256, 0, st>>>(w_blk_0_attn_k"),
            std::string::npos);
  EXPECT_NE(ss.find("lk_join(st, 2);"), std::string::npos);
  EXPECT_NE(ss.find("lk_fork(st, 1);"), std::string::npos);  // gate and up
  EXPECT_EQ(base.find("  lk_fork(st, "), std::string::npos);
  EXPECT_NE(
      s.why_invalid(knobs_of({{"side_streams", true}, {"fuse_qkv", true}, {"fuse_glu", true}})).find("independent"),
      std::string::npos);
  // gemm_prequant: a chunk's activations quantized once, the tensor-core GEMMs
  // reading the copy, a warp 16 output rows and groups of 8 activation rows (1 group here: tiny-qwen3's 512 rows of
  // q give too few warps for more); decode untouched.
  const std::string pq = program(l, {{"numerics", "int8"}, {"max_chunk", 64}, {"gemm_prequant", true}});
  EXPECT_NE(pq.find("lk_quantize_i8<true><<<dim3(1, 64), 64, 0, st>>>(f64_l0_h, f64_xq_l0_h, 256, 64);"),
            std::string::npos);
  EXPECT_NE(
      pq.find(
          "lk_gemm_i8q<false, 1><<<dim3(8, 8), 128, 0, st>>>(w_blk_0_attn_q, w_blk_0_attn_q, (const int*)f64_xq_l0_h"),
      std::string::npos);
  EXPECT_EQ(pq.find("lk_gemm_i8<64,"), std::string::npos);
  // gemm_tile: the copy quantized row by row, GEMMs as tiles staged in shared memory: tiny-qwen3's q (512 rows) in
  // 8 blocks of 64 rows, its 64-row chunk in tiles of 32 activation rows (the knob's 64 halved: 8 blocks are under one
  // an SM, and 32 is the least), 3 stages of (64 + 32) x 144 + 64 x 16 + 32 x 16 bytes (under 48 KiB); gate and up
  // (GLU, gemm_tile 128) 32 rows of each a block, tiles of at least 64 activation rows; over 48 KiB, the attribute
  // raised.
  const json tiled = {{"numerics", "int8"}, {"max_chunk", 64}, {"gemm_prequant", true}, {"gemm_tile", 64}};
  const std::string gt = program(l, tiled);
  EXPECT_NE(gt.find("lk_quantize_i8<false><<<dim3(1, 64), 64, 0, st>>>(f64_l0_h, f64_xq_l0_h, 256, 64);"),
            std::string::npos);
  EXPECT_EQ(gt.find("lk_quantize_i8<true>"), std::string::npos);
  EXPECT_NE(gt.find("lk_gemm_i8t<false, 32><<<dim3(8, 2), 128, 46080, st>>>(w_blk_0_attn_q, w_blk_0_attn_q, "
                    "(const int*)f64_xq_l0_h"),
            std::string::npos);
  EXPECT_EQ(gt.find("lk_gemm_i8q<"), std::string::npos);
  json tiled_glu = tiled;
  tiled_glu["fuse_glu"] = true;
  tiled_glu["gemm_tile"] = 128;
  const std::string gg = program(l, tiled_glu);
  EXPECT_NE(gg.find("lk_gemm_i8t<true, 64><<<"), std::string::npos);
  EXPECT_NE(gg.find("cudaFuncSetAttribute(lk_gemm_i8t<true, 64>, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                    "61440)"),
            std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"numerics", "int8"}, {"gemm_tile", 64}})).find("gemm_prequant"),
            std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"numerics", "int8"}, {"gemm_prequant", true}, {"gemm_tile", 48}}))
                .find("outside its domain"),
            std::string::npos);
  EXPECT_EQ(i8.find("lk_quantize_i8<true><<<"), std::string::npos);
  EXPECT_EQ(i8.find("lk_quantize_i8<false><<<"), std::string::npos);
  // gemv_prequant: the decode step's activations quantized once, row by row, and its GEMVs reading the copy.
  const std::string gq = program(l, {{"numerics", "int8"}, {"gemv_prequant", true}});
  // The library's optional parts only where a launch calls them: chunks of 1 row run no tensor-core GEMM.
  EXPECT_NE(program(l, {{"numerics", "int8"}, {"max_chunk", 1}}).find("#define LK_WITH_MMA 0"), std::string::npos);
  EXPECT_NE(program(l, {{"numerics", "int8"}, {"max_chunk", 16}}).find("#define LK_WITH_MMA 1"), std::string::npos);
  EXPECT_NE(gq.find("#define LK_WITH_BLOCKS 0"), std::string::npos);
  // (the attention norm's launch writes the copy: lk_add_rmsnorm<.., true>, its last parameter)
  EXPECT_NE(gq.find("lk_add_rmsnorm<false, true, 1><<<1, 256, 0, st>>>(f1_x, nullptr, v_blk_0_attn_norm, f1_l0_h, 256, "
                    "9.999999975e-07f, f1_xq_l0_h);"),
            std::string::npos);
  EXPECT_NE(gq.find("lk_gemv<lk_q8, 1, 1, lk_xq><<<64, 256, 0, st>>>(w_blk_0_attn_q, "
                    "lk_xq{(const int*)f1_xq_l0_h, 1, 0, nullptr, 0.000000000e+00f}"),
            std::string::npos);
  // (a chunk's GEMV slabs read a row-by-row copy of the chunk's rows too: here 2 rows from row 0)
  EXPECT_NE(gq.find("lk_gemv<lk_q8, 1, 2, lk_xq>"), std::string::npos);
  EXPECT_NE(gq.find("lk_xq{(const int*)f2_xq_"), std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"gemv_prequant", true}})).find("int8"), std::string::npos);
  EXPECT_NE(s.why_invalid(knobs_of({{"gemm_prequant", true}})).find("int8"), std::string::npos);
  EXPECT_NE(
      s.why_invalid(knobs_of({{"numerics", "int8"}, {"gemm_prequant", true}, {"gemm_tile", 128}})).find("fuse_glu"),
      std::string::npos);
  // Programmatic dependent launch: every launch through lk_launch (cudaLaunchKernelEx with the attribute).
  const std::string pdl = program(l, {{"pdl", true}});
  EXPECT_NE(pdl.find("lk_launch(lk_gemv<lk_q8, 1, 1>, dim3(64), dim3(256), 0, st, w_blk_0_attn_q"), std::string::npos);
  EXPECT_EQ(pdl.find("lk_gemv<lk_q8, 1, 1><<<"), std::string::npos);
  EXPECT_NE(knobs::space(l.model, {132, 80}).why_invalid(knobs_of({{"pdl", true}})).find("sm_90"), std::string::npos);
}

TEST(Emit, FusionsFallBackWhereALayersFormatsDifferAndNeedWholeWarps) {
  Loaded l = load("tiny-qwen3");
  model::Model m = l.model;
  gguf::TensorInfo f16 = *m.layer[0].wk, up = *m.layer[1].w_up;
  f16.type = ggml::Type::F16;
  up.type = ggml::Type::Q4_K;
  m.layer[0].wk = &f16;
  m.layer[1].w_up = &up;
  const knobs::Space s = knobs::space(m, {132, 90});
  const json fused = {{"fuse_qkv", true}, {"fuse_rope_kv", true}, {"fuse_rope", true}, {"fuse_glu", true}};
  EXPECT_TRUE(s.why_invalid(knobs_of(fused)).empty());
  // Layer 0 projects q, k, v apart and ropes in a launch of its own; layer 1 fuses them. Layer 0 fuses gate and up,
  // layer 1 (its up a q4_k matrix) keeps them apart with SwiGLU after.
  const lane::Schedule p = lane::schedule(l.file, m, knobs_of(fused), {132, 90});
  std::vector<std::string> kinds;
  for (const lane::Launch& x : p.forms[0].launches) kinds.push_back(x.kind);
  auto count = [&](const std::string& k) { return std::count(kinds.begin(), kinds.end(), k); };
  EXPECT_EQ(count("gemv_qkv_rope"), 1);
  EXPECT_EQ(count("rope_kv"), 1);
  EXPECT_EQ(count("gemv_glu"), 1);
  EXPECT_EQ(count("swiglu"), 1);
  model::Model odd = l.model;
  odd.kv_heads = 1;
  odd.head_dim = 6;
  odd.value_dim = 6;
  EXPECT_NE(knobs::space(odd, {132, 90})
                .why_invalid(knobs_of({{"fuse_qkv", true}, {"gemv_rows_per_warp", 4}}))
                .find("gemv_rows_per_warp"),
            std::string::npos);
}

TEST(Emit, TheProgramCarriesItsCheckpointAndSidecarIdentity) {
  Loaded l = load("tiny-llama");
  lane::Program p = lane::compile(l.file, l.model, {}, {132, 90});
  EXPECT_NE(p.cu.find("CKPT_DIGEST = " + std::to_string(l.file.digest()) + "ULL"), std::string::npos);
  EXPECT_NE(p.cu.find("SIDECAR_DIGEST = " + std::to_string(XXH64(p.sidecar.data(), p.sidecar.size(), 0)) + "ULL"),
            std::string::npos);
  EXPECT_EQ(p.description["checkpoint"]["size"], l.file.size());
  EXPECT_EQ(p.description["contract"], lane::kContractVersion);
}

// lane.json carries the bound the judge holds the lane to (its numerics', widened by its roundings), so that scripts
// judge a lane by the worker's rule instead of a table of their own.
TEST(Emit, TheDescriptionCarriesTheJudgesBound) {
  Loaded l = load("tiny-llama");
  const auto judge = [&](const knobs::Knobs& k) {
    return lane::compile(l.file, l.model, k, {132, 90}).description["judge"];
  };
  knobs::Knobs k;
  EXPECT_EQ(judge(k)["rel_l2"], 1e-3);
  EXPECT_EQ(judge(k)["tie"], 0);
  k.numerics = knobs::Numerics::Int8x2;
  k.kv_cache = knobs::KvCache::Bf16;
  EXPECT_DOUBLE_EQ(judge(k)["rel_l2"].get<double>(),
                   knobs::tolerance(k).rel_l2);  // (int8x2's and bf16's in quadrature)
  EXPECT_NEAR(judge(k)["rel_l2"].get<double>(), 1e-2, 1e-4);
  EXPECT_DOUBLE_EQ(judge(k)["tie"].get<double>(), 4 * judge(k)["rel_l2"].get<double>());
  EXPECT_EQ(judge(k)["argmax_agree"], 0.99);
  k.numerics = knobs::Numerics::Precise;
  k.kv_cache = knobs::KvCache::Act;
  EXPECT_EQ(judge(k)["rel_l2"], 1e-9);
  EXPECT_EQ(judge(k)["argmax_agree"], 1.0);
}

TEST(Emit, LaneXxh64IsXxh64) {
  std::mt19937 rng(5);
  std::vector<uint8_t> buf(300);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t n : {0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 100, 299, 300})
    EXPECT_EQ(lk_xxh64(buf.data(), n), XXH64(buf.data(), n, 0)) << n;
}

// Whether nvcc is here to build lanes. Where it must be (LT_REQUIRE_NVCC=1, on a machine kind that has it), its
// absence fails the test instead of skipping it; ctest reports a skip as "Not Run (Skipped)", not as passed.
bool have_nvcc() {
  const bool here = !nvcc_path().empty() && std::filesystem::exists(nvcc_path());
  const char* required = std::getenv("LT_REQUIRE_NVCC");
  if (!here && required && std::string(required) == "1")
    ADD_FAILURE() << "LT_REQUIRE_NVCC=1 but no nvcc at '" << nvcc_path() << "' (set LT_NVCC)";
  return here;
}

// The runtime objects the suite's lane builds share: a folder of the build tree, not the user's cache.
std::filesystem::path runtime_cache() {
  return std::filesystem::path(LT_BINARY_DIR) / "tests" / "lane-runtime";
}

// The lanes of every dense tiny preset under each numerics build for sm_80 and sm_90 with nvcc, warnings as errors.
class LaneBuild : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(LaneBuild, BuildsWithoutWarnings) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  auto [preset, numerics] = GetParam();
  Loaded l = load(preset);
  TempDir dir;
  lane::write(lane::compile(l.file, l.model, knobs_of({{"numerics", numerics}}), {132, 90}), dir.path());
  for (int arch : {80, 90}) {
    std::string log;
    ASSERT_NO_THROW(lane::build(dir.path(), arch, &log, runtime_cache()))
        << preset << " " << numerics << " sm_" << arch;
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
    EXPECT_TRUE(std::filesystem::exists(dir / "lane"));
  }
}

// The CUDA benchmarks (bench/*.cu) include the kernel library's files as a lane does, each a subset in its order: a
// change that moves a definition between files breaks them, here rather than on the GPU machine.
TEST(BenchSources, CompileWithNvcc) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  size_t built = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(LT_SOURCE_DIR) / "bench")) {
    if (e.path().extension() != ".cu") continue;
    TempDir dir;
    const Output o = run(nvcc_path() + " -std=c++20 -O1 -arch=sm_90 -c -o " + (dir / "bench.o").string() + " " +
                         e.path().string());
    EXPECT_EQ(o.status, 0) << e.path() << "\n" << o.out;
    ++built;
  }
  EXPECT_GE(built, 5u);
}

// The fused launches (biases in the parts: qwen2), the folded norm and rope, fewer heads a block, side streams, PDL
// and the prequantized GEMMs build too.
TEST(LaneFusedBuild, BuildsWithoutWarnings) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  Loaded l = load("tiny-qwen2");
  for (const json& k : {json{{"fuse_qkv", true},
                             {"fuse_glu", true},
                             {"fuse_rope_kv", true},
                             {"gemv_rows_per_warp", 2},
                             {"gemv_split", 4}},
                        json{{"fuse_norm", true}, {"pdl", true}, {"numerics", "int8x2"}, {"max_chunk", 64}},
                        json{{"fuse_qkv", true},
                             {"fuse_rope_kv", true},
                             {"fuse_rope", true},
                             {"attn_heads", 1},
                             {"pdl", true},
                             {"numerics", "precise"}},
                        json{{"side_streams", true},
                             {"pdl", true},
                             {"numerics", "int8"},
                             {"max_chunk", 64},
                             {"gemv_prequant", true},
                             {"gemv_split", 2}},
                        json{{"gemm_prequant", true},
                             {"gemv_prequant", true},
                             {"numerics", "int8x2"},
                             {"max_chunk", 256},
                             {"fuse_glu", true},
                             {"fuse_qkv", true},
                             {"fuse_rope_kv", true},
                             {"fuse_rope", true}},
                        json{{"gemm_prequant", true},
                             {"gemm_tile", 64},
                             {"numerics", "int8x2"},
                             {"max_chunk", 256},
                             {"fuse_glu", true},
                             {"pdl", true}},
                        json{{"gemm_prequant", true},
                             {"gemv_prequant", true},
                             {"fuse_norm", true},
                             {"numerics", "int8"},
                             {"max_chunk", 16},
                             {"gemm_rows", 32}},
                        // norm_fold: the folded projections (qwen2's biases), their readers scaling by the spans
                        json{{"gemv_prequant", true},
                             {"norm_fold", true},
                             {"numerics", "int8x2"},
                             {"fuse_qkv", true},
                             {"fuse_glu", true},
                             {"pdl", true},
                             {"max_chunk", 16}},
                        // norm_fold_groups: blocks of a 32-group (1,024 threads at a row a warp; 256 at 4)
                        json{{"gemv_prequant", true},
                             {"norm_fold", true},
                             {"norm_fold_groups", true},
                             {"numerics", "int8"},
                             {"fuse_qkv", true},
                             {"pdl", true},
                             {"max_chunk", 16}},
                        json{{"gemv_prequant", true},
                             {"norm_fold", true},
                             {"norm_fold_groups", true},
                             {"gemv_rows_per_warp", 4},
                             {"numerics", "int8"},
                             {"fuse_glu", true},
                             {"max_chunk", 16}},
                        // The compact caches through each writer (rope's append, the append launch, the fused
                        // projection's tail) and each attention kernel; the lanes' attention under f64 too.
                        json{{"kv_cache", "f16"}, {"attn_lanes", true}, {"pdl", true}, {"max_chunk", 16}},
                        json{{"kv_cache", "bf16"}, {"fuse_rope_kv", true}, {"attn_splits", 1}},
                        json{{"kv_cache", "q8_0"},
                             {"numerics", "int8"},
                             {"fuse_qkv", true},
                             {"fuse_rope_kv", true},
                             {"fuse_rope", true},
                             {"attn_lanes", true},
                             {"max_chunk", 64}},
                        json{{"kv_cache", "q8_0"}, {"attn_heads", 1}},
                        json{{"numerics", "precise"}, {"attn_lanes", true}, {"max_chunk", 4}},
                        // Attention on the tensor cores over either 16-bit cache, whole and split, chunks' and the step's.
                        json{{"kv_cache", "f16"}, {"attn_mma", 1}, {"max_chunk", 64}, {"pdl", true}},
                        json{{"kv_cache", "bf16"}, {"attn_mma", 2}, {"attn_splits", 8}, {"numerics", "int8"}}}) {
    TempDir dir;
    lane::write(lane::compile(l.file, l.model, knobs_of(k), {132, 90}), dir.path());
    std::string log;
    ASSERT_NO_THROW(lane::build(dir.path(), 90, &log, runtime_cache())) << k.dump() << log;
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
}

// A Q4_K_M checkpoint's lane with its chunks on the tensor cores (lk_gemm_i8qb over Q4_K and Q6_K) builds, and so do a
// block GEMM of each kind (lk_gemm_i8qb; under gemm_tile lk_gemm_i8tb) alone as the worker's kernel modules: a
// module's library switches follow from its instance's name alone. The lane's GEMVs in gemv_short's form, its launches
// under pdl_first, its Q6_K v's in the fused q/k launch (fuse_qkv_mixed); and gemv_short's form of two units a lane
// and the fused gate/up GEMV staging the int8 copy (glu_stage), alone and in blocks of a 32-group writing the down's
// copy (glu_groups, beside norm_fold; and over Q8_0 rows of two units a lane), as modules.
TEST(LaneBlockBuild, TheBlockGemmsBuildInTheLaneAndAsModules) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  TempDir dir;
  synth::Options o;
  o.preset = "tiny-llama";
  o.type = ggml::Type::Q4_K;
  o.mixed = true;
  o.seed = 3;
  synth::write(o, dir / "q4km.gguf");
  const gguf::File f = gguf::File::open(dir / "q4km.gguf");
  const model::Model m = model::recognize(f);
  const json k = {{"numerics", "int8x2"}, {"gemm_prequant", true}, {"max_chunk", 64}, {"fuse_glu", true}};
  json short_rows = k;  // (on 2 multiprocessors the 512-row GEMVs take gemv_short's form: A 1, 4x the rows)
  short_rows["gemv_short"] = true;
  short_rows["pdl"] = true;  // (and each launch letting the next one start before its wait: LK_PDL_FIRST)
  short_rows["pdl_first"] = true;
  short_rows["fuse_qkv"] = short_rows["fuse_qkv_mixed"] = true;  // (the Q6_K v's in the fused q/k launch)
  const lane::Program program = lane::compile(f, m, knobs_of(short_rows), {2, 90});
  EXPECT_NE(program.cu.find("lk_gemv<lk_blk<LK_Q6_K>, 4, 1, const lk_act*, 1>"), std::string::npos);
  EXPECT_NE(program.cu.find("#define LK_PDL_FIRST 3\n"), std::string::npos);
  EXPECT_NE(program.cu.find("lk_gemv_parts_mixed<lk_blk<LK_Q4_K>, lk_blk<LK_Q6_K>, 1, 1, 1>"),
            std::string::npos);
  lane::write(program, dir / "lane");
  std::string log;
  ASSERT_NO_THROW(lane::build(dir / "lane", 90, &log)) << log;
  EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  json tiled = k;
  tiled["gemm_tile"] = 64;
  const json staged = {{"numerics", "int8"}, {"gemv_prequant", true}, {"fuse_glu", true}, {"glu_stage", true}};
  json grouped = staged;  // (glu_groups: the GLU's blocks of a 32-group writing the down's copy)
  grouped["glu_groups"] = grouped["norm_fold"] = true;
  int modules = 0;
  struct Module {
    json knobs;
    const char* kernel;
    bool in_lane;  // the lane's image holds it (else the whole instance's name is built as it is)
  };
  // (gemv_short's form of two units a lane, a Q8_0 row of up to 1,024 values, is in no tiny checkpoint's lane on 132
  // multiprocessors; nor is glu_groups' over such rows, qwen3-0.6b's)
  for (const auto& [knobs, kernel, in_lane] :
       {Module{k, "lk_gemm_i8qb<", true}, Module{tiled, "lk_gemm_i8tb<", true},
        Module{k, "lk_gemv<lk_q8, 2, 1, lk_xq, 2>", false},
        Module{staged, "lk_gemv_glu<lk_blk<LK_Q4_K>, 1, 1, lk_xq, true>", true},
        Module{grouped, "lk_gemv_glu_group<lk_blk<LK_Q4_K>, 4, 1, lk_xq, true>", true},
        Module{grouped, "lk_gemv_glu_group<lk_q8, 2, 2, lk_xq>", false}}) {
    const lane::Image img = lane::image(f, m, knobs_of(knobs), {132, 90});
    const auto it = std::find_if(img.kernels.begin(), img.kernels.end(),
                                 [&](const std::string& i) { return i.rfind(kernel, 0) == 0; });
    ASSERT_TRUE(!in_lane || it != img.kernels.end()) << kernel;
    const std::string instance = it != img.kernels.end() ? *it : kernel;
    const std::string src = (dir / ("m" + std::to_string(modules++) + ".cu")).string();
    std::ofstream(src) << lane::module_source(img.head, instance);
    std::string cmd;
    for (const std::string& part : lane::nvcc_module_command(src, src + ".cubin", 90)) cmd += "'" + part + "' ";
    const Output out = run(cmd + "2>&1");
    EXPECT_EQ(out.status, 0) << instance << ": " << out.out;
  }
}

// gemm_half's lanes build for sm_90 without warnings: a Q4_K_M checkpoint under int8 (the decode step's int8 copy
// beside the chunks' f16 one; Q4_K and Q6_K tiles, the fused gate/up GEMM, q/k/v grouped) and a bf16 one under
// dequant; and its GEMMs build alone as a worker's kernel modules (LK_WITH_GEMM_HALF set by their instances' names:
// the grouped ones' modules lacked it once, session 45), the wgmma ones too.
TEST(LaneHalfBuild, BuildsInTheLaneAndAsAModule) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  TempDir dir;
  synth::write(synth::Options{.preset = "tiny-llama", .type = ggml::Type::Q4_K, .mixed = true, .seed = 3},
               dir / "q4km.gguf");
  synth::write(synth::Options{.preset = "tiny-qwen3", .type = ggml::Type::BF16, .seed = 3}, dir / "bf16.gguf");
  const std::pair<const char*, json> lanes[] = {
      {"q4km.gguf",
       {{"numerics", "int8"},
        {"gemm_half", true},
        {"gemv_prequant", true},
        {"max_chunk", 256},
        {"fuse_glu", true},
        {"fuse_qkv", true},
        {"fuse_qkv_mixed", true}}},
      {"bf16.gguf", {{"numerics", "dequant"}, {"gemm_half", true}, {"max_chunk", 64}, {"pdl", true}}},
  };
  int at = 0;
  for (const auto& [file, k] : lanes) {
    const gguf::File f = gguf::File::open(dir / file);
    const model::Model m = model::recognize(f);
    const auto out = dir / ("lane" + std::to_string(at++));
    lane::write(lane::compile(f, m, knobs_of(k), {132, 90}), out);
    std::string log;
    ASSERT_NO_THROW(lane::build(out, 90, &log)) << file << ": " << log;
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
    const lane::Image img = lane::image(f, m, knobs_of(k), {132, 90});
    auto first = [&](const std::string& prefix) {
      const auto it = std::find_if(img.kernels.begin(), img.kernels.end(),
                                   [&](const std::string& i) { return i.rfind(prefix, 0) == 0; });
      return it == img.kernels.end() ? std::string() : *it;
    };
    ASSERT_NE(first("lk_gemm_h<"), "") << file;
    if (at > 1) continue;  // (one lane's modules suffice)
    ASSERT_NE(first("lk_gemm_h_parts<"), "") << file;
    for (const std::string& instance : {first("lk_gemm_h<"), first("lk_gemm_h_parts<"),
                                        std::string("lk_gemm_w<lk_blk<LK_Q4_K>, true, 128, 2, 128>"),
                                        std::string("lk_gemm_w_parts<lk_blk<LK_Q4_K>, 128, 2, 128>")}) {
      const std::string src = (dir / "module.cu").string();
      std::ofstream(src) << lane::module_source(img.head, instance);
      std::string cmd;
      for (const std::string& part : lane::nvcc_module_command(src, src + ".cubin", 90)) cmd += "'" + part + "' ";
      const Output o = run(cmd + "2>&1");
      EXPECT_EQ(o.status, 0) << instance << ": " << o.out;
    }
  }
}

// The mixtures' lanes build for sm_90 without warnings: qwen3moe and qwen2moe (the shared expert, its GLU fused) under
// each numerics with chunks (the int8 ones' dense parts on the tensor cores), the combine folded with the next norm,
// PDL; experts in a block format (q4_k, dp4a over their codes); gpt-oss's experts in MXFP4 (biases, the clamped
// SwiGLU) with its attention (LaneGptOssBuild builds that under the attention kernels' knobs); both under gemm_half.
TEST(LaneMixtureBuild, BuildsWithoutWarnings) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  TempDir q4k;
  for (const auto& [preset, type] : {std::pair{"tiny-moe", ggml::Type::Q4_K}, {"tiny-gpt-oss", ggml::Type::MXFP4}})
    synth::write(synth::Options{.preset = preset, .type = type, .seed = 3}, q4k / (std::string(preset) + ".gguf"));
  const std::pair<std::filesystem::path, json> lanes[] = {
      {checkpoint("tiny-moe"), {{"numerics", "dequant"}, {"max_chunk", 16}, {"fuse_norm", true}, {"pdl", true}}},
      {checkpoint("tiny-moe"), {{"numerics", "precise"}, {"max_chunk", 4}}},
      {checkpoint("tiny-qwen2moe"),
       {{"numerics", "int8"}, {"max_chunk", 64}, {"gemm_prequant", true}, {"gemv_prequant", true}, {"fuse_glu", true}}},
      {checkpoint("tiny-qwen2moe"), {{"numerics", "int8x2"}, {"max_chunk", 16}, {"side_streams", true}}},
      {q4k / "tiny-moe.gguf", {{"numerics", "int8"}, {"max_chunk", 16}, {"fuse_norm", true}}},
      {q4k / "tiny-gpt-oss.gguf", {{"numerics", "int8x2"}, {"max_chunk", 16}, {"gemv_prequant", true}}},
      // the chunks' experts on the tensor cores in f16 (lk_moe_gemm_h): Q4_K experts, and MXFP4 ones with biases
      {q4k / "tiny-moe.gguf", {{"numerics", "int8"}, {"max_chunk", 64}, {"gemm_half", true}}},
      {q4k / "tiny-gpt-oss.gguf", {{"numerics", "dequant"}, {"max_chunk", 16}, {"gemm_half", true}, {"pdl", true}}},
      // chunks whose experts see 64 pairs each or more: the grouped GEMM's tiles of 128 pairs
      {q4k / "tiny-gpt-oss.gguf", {{"numerics", "int8"}, {"max_chunk", 512}, {"gemm_half", true}}},
  };
  for (const auto& [path, k] : lanes) {
    const gguf::File f = gguf::File::open(path);
    const model::Model m = model::recognize(f);
    TempDir dir;
    lane::write(lane::compile(f, m, knobs_of(k), {132, 90}), dir.path());
    std::string log;
    ASSERT_NO_THROW(lane::build(dir.path(), 90, &log, runtime_cache())) << path << " " << k.dump() << log;
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
}

// gpt-oss's lane (sinks, sliding windows, YaRN, the output bias) builds for sm_90 without warnings: under the default
// knobs (lk_attention, split and folded), and with attention on the tensor cores over an f16 cache in both forms
// (attn_mma 2), unsplit so that its own kernel adds the sinks.
TEST(LaneGptOssBuild, BuildsWithoutWarnings) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  Loaded l = load("tiny-gpt-oss");
  for (const json& k : {json::object(), json{{"attn_mma", 2}, {"kv_cache", "f16"}, {"attn_splits", 1}}}) {
    TempDir dir;
    lane::write(lane::compile(l.file, l.model, knobs_of(k), {132, 90}), dir.path());
    std::string log;
    ASSERT_NO_THROW(lane::build(dir.path(), 90, &log, runtime_cache())) << k.dump() << log;
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
}

// The gemmas' lanes through nvcc (LK_GELU: the fused gate/up launches' GELU; gemma2's LK_ATTN_SOFTCAP and
// LK_FINAL_SOFTCAP: every attention path's scores and the arg-max's logits capped): the GELU product alone
// (lk_swiglu<1>), the scaled embedding, gemma3's sliding layers' own rope tables, under the int8 numerics' copies with
// the decode step's tensor-core attention roping by either table; the fused gate/up GEMV writing the down projection's
// copy, with int8 tiled chunks; dequant with fused f16 GEMM chunks; and (the plain and lane-a-position attentions)
// precise with attn_lanes, dequant without.
class LaneGemmaBuild : public ::testing::TestWithParam<const char*> {};

TEST_P(LaneGemmaBuild, BuildsWithoutWarnings) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  Loaded l = load(GetParam());
  for (const json& k : {json{{"numerics", "int8"},
                             {"gemv_prequant", true},
                             {"kv_cache", "f16"},
                             {"attn_mma", 2},
                             {"fuse_qkv", true},
                             {"fuse_rope_kv", true},
                             {"attn_splits", 2}},
                        json{{"numerics", "int8"},
                             {"gemv_prequant", true},
                             {"gemm_prequant", true},
                             {"fuse_glu", true},
                             {"glu_groups", true},
                             {"max_chunk", 64}},
                        json{{"numerics", "dequant"},
                             {"gemm_half", true},
                             {"fuse_glu", true},
                             {"max_chunk", 64},
                             {"fuse_rope_kv", true}},
                        json{{"numerics", "precise"}, {"attn_lanes", true}, {"attn_splits", 2}},
                        json{{"numerics", "dequant"}}}) {
    TempDir dir;
    lane::write(lane::compile(l.file, l.model, knobs_of(k), {132, 90}), dir.path());
    std::string log;
    ASSERT_NO_THROW(lane::build(dir.path(), 90, &log, runtime_cache())) << k.dump() << log;
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
}

INSTANTIATE_TEST_SUITE_P(Gemmas, LaneGemmaBuild, ::testing::Values("tiny-gemma2", "tiny-gemma3"));

// The gemmas' heads, 256 wide, on the tensor cores through nvcc: the decode step's block of 2 x 4 warps (rope and the
// append folded in: gemma3's with its q/k norms) and its chunks' 64-row blocks with the queries read from shared memory
// at each use, without warnings, and no attention kernel spilling registers (ptxas -v, session 44: ~140 and ~240 of
// 255).
TEST(LaneGemmaBuild, WideHeadsOnTheTensorCores) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  for (const char* arch : {"gemma2", "gemma3"}) {
    TempDir dir;
    synth::Options o;
    o.shape = wide_gemma(arch);
    synth::write(o, dir / "m.gguf");
    const gguf::File f = gguf::File::open(dir / "m.gguf");
    const model::Model m = model::recognize(f);
    TempDir lane_dir;
    lane::write(lane::compile(f, m, knobs_of(wide_step_knobs()), {132, 90}), lane_dir.path());
    std::string log;
    ASSERT_NO_THROW(lane::build(lane_dir.path(), 90, &log, runtime_cache())) << arch << log;
    EXPECT_EQ(log.find("warning"), std::string::npos) << arch << log;
    // Their registers are the form's budget: ptxas spills none of the attention kernels to local memory.
    std::string cmd;
    const std::string src = (lane_dir / "lane.cu").string();
    for (const std::string& part : lane::nvcc_module_command(src, src + ".cubin", 90)) cmd += "'" + part + "' ";
    const Output ptxas = run(cmd + "-Xptxas -warn-spills");
    ASSERT_EQ(ptxas.status, 0) << ptxas.out;
    std::istringstream lines(ptxas.out);
    for (std::string line; std::getline(lines, line);)
      EXPECT_FALSE(line.find("spilled") != std::string::npos && line.find("lk_attention_mma") != std::string::npos)
          << arch << ": " << line;
  }
}

// Shapes no preset has, through nvcc: heads 80 wide (the step attention's 4-warp form) beside a q5_k_m file whose
// rows are not whole 256-blocks; 7 query heads a key/value head 96 wide in q4_0; heads 256 wide (no tensor-core
// attention) in iq4_xs; a gpt-oss mixture with 3 query heads a key/value head 48 wide in mxfp4. Each under two knob
// points drawn uniformly from its space (the random draws' CPU side: RandomShapesOnCpu; the GPU's: bench/shapes.sh).
TEST(LaneRandomShapeBuild, BuildsWithoutWarnings) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  const std::pair<const char*, const char*> shapes[] = {
      {R"({"architecture":"qwen3","layers":1,"d_model":640,"heads":8,"kv_heads":2,"head_dim":80,"ffn":1760,)"
       R"("vocab":700,"context":4096,"qk_norm":true})",
       "q5_k_m"},
      {R"({"architecture":"qwen2","layers":1,"d_model":448,"heads":14,"kv_heads":2,"head_dim":96,"ffn":1216,)"
       R"("vocab":600,"context":4096,"qkv_bias":true,"tied_output":true})",
       "q4_0"},
      {R"({"architecture":"llama","layers":1,"d_model":512,"heads":4,"kv_heads":1,"head_dim":256,"ffn":1024,)"
       R"("vocab":500,"context":4096})",
       "iq4_xs"},
      {R"({"architecture":"gpt-oss","layers":2,"d_model":256,"heads":6,"kv_heads":2,"head_dim":48,"ffn":256,)"
       R"("vocab":500,"context":4096,"qkv_bias":true,"experts":4,"experts_used":2,"expert_ffn":192,)"
       R"("sliding_window":32,"rope_scale_factor":32,"rope_original_context":4096})",
       "mxfp4"},
  };
  std::mt19937_64 rng(34);
  for (const auto& [shape, type] : shapes) {
    TempDir dir;
    synth::Options o;
    o.shape = synth::parse_shape(shape);
    const auto t = synth::parse_matrix_type(type);
    o.type = t->type;
    o.mixed = t->mixed;
    synth::write(o, dir / "m.gguf");
    const gguf::File f = gguf::File::open(dir / "m.gguf");
    const model::Model m = model::recognize(f);
    for (const knobs::Knobs& k : knobs::space(m, {132, 90}).sample_exact(rng, 2)) {
      TempDir lane_dir;
      lane::write(lane::compile(f, m, k, {132, 90}), lane_dir.path());
      std::string log;
      ASSERT_NO_THROW(lane::build(lane_dir.path(), 90, &log, runtime_cache())) << shape << " " << k.key() << log;
      EXPECT_EQ(log.find("warning"), std::string::npos) << shape << " " << k.key() << log;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DenseTinyPresets, LaneBuild,
                         ::testing::Combine(::testing::ValuesIn(kDense),
                                            ::testing::Values("dequant", "precise", "int8", "int8x2")));

// The program's refusals that come before it touches a GPU: usage errors exit 2, a checkpoint or sidecar other than
// its own exits 3.
TEST(LaneProgram, RefusesBadArgumentsAndForeignFilesWithoutAGpu) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc here";
  Loaded l = load("tiny-qwen3");
  TempDir dir;
  lane::write(lane::compile(l.file, l.model, {}, {132, 90}), dir.path());
  const std::string bin = lane::build(dir.path(), 90, nullptr, runtime_cache()).string();
  const std::string ck = checkpoint("tiny-qwen3").string(), side = (dir / "lane.sidecar").string();
  auto status = [&](const std::string& args) { return run(bin + " " + args).status; };
  EXPECT_EQ(status(""), 2);
  EXPECT_EQ(status(ck + " " + side + " 4 1 2 999999"), 2);  // a token outside the vocabulary
  EXPECT_EQ(status(ck + " " + side + " 0 1 2"), 2);         // no token to generate
  EXPECT_EQ(status(ck + " " + side + " 5000 1 2"), 2);      // past the caches
  EXPECT_EQ(status(ck + " " + side + " 4 x"), 2);
  EXPECT_EQ(status(ck + " " + side + " 4 1 --bogus"), 2);
  EXPECT_EQ(status(ck + " " + side + " 4 1 --stagger"), 2);
  EXPECT_EQ(status(ck + " " + side + " --prompts " + (dir / "none").string()), 2);
  {
    std::ofstream(dir / "bad.prompts") << "4 1 2 oops\n";
    EXPECT_EQ(status(ck + " " + side + " --prompts " + (dir / "bad.prompts").string()), 2);
  }
  EXPECT_EQ(status(checkpoint("tiny-llama").string() + " " + side + " 4 1 2"), 3);
  EXPECT_EQ(status(ck + " " + (dir / "lane.json").string() + " 4 1 2"), 3);
  const Output o = run(bin + " " + ck + " " + (dir / "lane.json").string() + " 4 1 2");
  EXPECT_NE(o.out.find("is not this program's sidecar"), std::string::npos) << o.out;
}

TEST(Cli, CompileKnobsAndBuildCommands) {
  TempDir dir;
  const std::string ck = checkpoint("tiny-qwen2").string();
  Output k = run(cli() + " knobs " + ck + " --json");
  ASSERT_EQ(k.status, 0) << k.out;
  EXPECT_EQ(json::parse(k.out)["knobs"].size(), knobs::space(load("tiny-qwen2").model, {132, 90}).domains.size());
  std::ofstream(dir / "k.json") << R"({"attn_splits": 3})";
  Output bad = run(cli() + " compile " + ck + " --knobs " + (dir / "k.json").string() + " -o " + (dir / "l").string());
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("attn_splits"), std::string::npos) << bad.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "l" / "lane.cu"));
  std::ofstream(dir / "k.json") << R"({"attn_splits": 2})";
  Output ok = run(cli() + " compile " + ck + " --knobs " + (dir / "k.json").string() + " -o " + (dir / "l").string());
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "l" / "lane.cu"));
  EXPECT_NE(run(cli() + " build " + (dir / "l").string() + " --arch 90").status, 0);  // sm_NN only
}

// The lane runs the mixtures: qwen3moe's, qwen2moe's and gpt-oss's (its attention's sinks, sliding windows and YaRN
// rope too); `knobs` lists gpt-oss's space.
TEST(Cli, TheMixturesCompile) {
  TempDir dir;
  for (const char* preset : {"tiny-moe", "tiny-qwen2moe", "tiny-gpt-oss"}) {
    Output o = run(cli() + " compile " + checkpoint(preset).string() + " -o " + (dir / preset).string());
    EXPECT_EQ(o.status, 0) << preset << o.out;
    EXPECT_TRUE(std::filesystem::exists(dir / preset / "lane.cu")) << preset;
  }
  Output k = run(cli() + " knobs " + checkpoint("tiny-gpt-oss").string() + " --json");
  ASSERT_EQ(k.status, 0) << k.out;
  EXPECT_EQ(json::parse(k.out)["knobs"].size(), knobs::space(load("tiny-gpt-oss").model, {132, 90}).domains.size());
}

}  // namespace
}  // namespace lt::test
