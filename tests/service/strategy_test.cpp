// The search strategies on their own: the knob space counted without listing it, each strategy restored from its
// saved state proposing what the live one would, and the model strategy reaching a landscape's best in fewer
// measurements than random draws.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <set>

#include "fake_compiler.hpp"
#include "lane_landscape.hpp"

namespace lt::coord {
namespace {

using test::Bench;

// The tiny checkpoint's model, as the knob space reads it.
struct Tiny {
  test::TempDir dir;
  std::shared_ptr<gguf::File> file;
  model::Model model;
  Tiny() {
    synth::Options o;
    o.preset = "tiny-qwen3";
    synth::write(o, dir / "tiny.gguf");
    file = std::make_shared<gguf::File>(gguf::File::open(dir / "tiny.gguf"));
    model = model::recognize(*file);
  }
};

// The space's valid points counted one by one (each() visits them all).
size_t visited(const knobs::Space& s) {
  size_t n = 0;
  s.each([&](const knobs::Knobs&) { ++n; });
  return n;
}

TEST(KnobCount, CountsWhatTheGridVisitsWithoutVisitingIt) {
  Tiny t;
  auto h200 = knobs::space(t.model, {132, 90});
  auto a100 = knobs::space(t.model, {108, 80});  // no pdl
  auto short_context = t.model;
  short_context.context = 16;  // no chunks past 16 rows
  auto small = knobs::space(short_context, {132, 90});
  for (auto* s : {&h200, &a100, &small}) {
    // Fewer values of the knobs no constraint reads keep the visit short; the count multiplies them back.
    // (kv_cache and attn_mma keep two values: their constraints with the precise numerics and the chunks are still
    // walked; norm_fold_groups' one rule, on norm_fold, is AllowsAgreesWithTheConstraintsInWords')
    for (auto& d : s->domains)
      if (d.name == "attn_splits" || d.name == "gemv_warps" || d.name == "attn_lanes" || d.name == "norm_fold_groups")
        d.values.resize(1);
      else if (d.name == "kv_cache" || d.name == "attn_mma")
        d.values.resize(2);
    EXPECT_EQ(s->size(), visited(*s));
  }
  // (the cache types multiply by 1 + 3 x 3/4 of the points: not the precise numerics; attn_lanes by 2; attn_mma adds
  // the 16-bit caches' points with chunks, and those with attn_heads 0 and attn_lanes off once more; gemm_half adds
  // the points of the other numerics with chunks of 16 or more and the int8 GEMMs' knobs at their defaults; gemv_pipe,
  // retired in session 36, had tripled the int8 numerics' points with gemv_split 1: 70,885,440 and 23,628,480;
  // norm_fold adds the int8 points with gemv_prequant, gemv_split 1 and fuse_norm off again: 37,131,840 ->
  // 41,351,040 and 12,377,280 -> 13,783,680; norm_fold_groups those of norm_fold once more: 45,570,240 and
  // 15,190,080; glu_groups over Q8_0 (session 38) the points with gemv_prequant and fuse_glu once more: 56,456,640
  // and 18,818,880)
  EXPECT_EQ(knobs::space(t.model, {132, 90}).size(), 56456640u);  // (pdl_first: 3/2 of the points, sm_90 only)
  EXPECT_EQ(knobs::space(t.model, {108, 80}).size(), 18818880u);
}

// allows() is why_constrained() without the words: the same verdict on points drawn from the whole product.
TEST(KnobCount, AllowsAgreesWithTheConstraintsInWords) {
  Tiny t;
  auto s = knobs::space(t.model, {132, 90});
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<uint64_t> ordinal(0, s.raw_size() - 1);
  size_t allowed = 0;
  for (int i = 0; i < 20000; ++i) {
    auto k = s.at(ordinal(rng));
    bool ok = s.allows(k);
    ASSERT_EQ(ok, s.why_constrained(k).empty()) << k.key();
    allowed += ok;
  }
  EXPECT_GT(allowed, 25u);  // both verdicts, many times each (about 0.2% of the product holds)
  // The grid's order is the ordinals': at() of the first ordinals are each()'s first points (each() walks the whole
  // space: the knobs no constraint reads, and the cache and attention kernels, cut to keep it short).
  for (auto& d : s.domains)
    if (d.name == "attn_splits" || d.name == "gemv_warps" || d.name == "attn_lanes" || d.name == "kv_cache" ||
        d.name == "attn_mma")
      d.values.resize(1);
  std::vector<std::string> first;
  s.each([&](const knobs::Knobs& k) {
    if (first.size() < 5) first.push_back(k.key());
  });
  std::vector<std::string> walked;
  for (uint64_t o = 0; walked.size() < 5; ++o)
    if (s.allows(s.at(o))) walked.push_back(s.at(o).key());
  EXPECT_EQ(first, walked);
}

// An 8B model's shape (32 query heads over 8 key/value heads, the tiny preset's widths): 82,497,600 points
// (66,591,360 before glu_groups took Q8_0's short rows, 60,426,720 before norm_fold_groups, 54,262,080 before
// norm_fold, 103,579,200 with gemv_pipe in sessions 33-35; 29,048,640 before the knobs of sessions 24-32, 24,397,440
// before gemm_half, 15,808,320 before attention on the tensor cores, 2,067,840 before the cache types and the
// lane-a-position attention; the 1,419,840 the issue names before gemm_tile).
TEST(KnobCount, AnEightBillionModelsSpace) {
  Tiny t;
  auto m = t.model;
  m.heads = 32;
  m.kv_heads = 8;
  m.head_dim = m.value_dim = 128;
  m.context = 131072;
  auto s = knobs::space(m, {132, 90});
  EXPECT_EQ(s.raw_size(), 40768634880u);
  EXPECT_EQ(s.size(), 82497600u);
}

// Drives a strategy as the coordinator does, `batch` at a time, every proposal measured by `measure` before the next
// batch; stops after `limit` measurements, when it is done, or when `enough` says so. Returns the observations in
// order.
template <class Measure>
std::vector<Observation> drive(Strategy& st, const Measure& measure, size_t limit,
                               const std::function<bool(const Observation&)>& enough = {}, size_t batch = 8) {
  std::vector<Observation> seen;
  while (seen.size() < limit) {
    auto props = st.propose(batch, 0);
    if (props.empty()) break;
    for (auto& p : props) {
      seen.push_back(measure(p));
      st.take(seen.back());
      if (enough && enough(seen.back())) return seen;
    }
  }
  return seen;
}

// A strategy restored from its saved state (and fed every observation again) proposes what the live one does.
TEST(Strategies, RestoredFromTheirStateTheyProposeWhatTheLiveOnesWould) {
  Bench b;
  for (std::string name : {"grid", "random", "halving", "model"}) {
    SCOPED_TRACE(name);
    SearchSettings s;
    s.strategy = name;
    s.budget = 40;
    s.seed = 5;
    auto live = make_strategy(*b.space, s);
    auto measure = [&](const Proposal& p) { return b.measure(p, Objective::Workload); };
    auto seen = drive(*live, measure, 24);
    auto restored = restore_strategy(*b.space, live->save());
    for (auto& o : seen) restored->take(o);
    EXPECT_EQ(restored->planned(), live->planned());
    for (int round = 0; round < 3; ++round) {
      auto a = live->propose(8, 0), c = restored->propose(8, 0);
      ASSERT_EQ(a.size(), c.size());
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].key, c[i].key);
        EXPECT_EQ(a[i].stage, c[i].stage);
        EXPECT_EQ(a[i].verify, c[i].verify);
        auto o = measure(a[i]);
        live->take(o);
        restored->take(o);
      }
    }
    EXPECT_EQ(restored->save(), live->save());
  }
}

// Halving whose last round all fails its verification (a race under --stagger, say) verifies the next best of the round
// before in its place, until one passes: the search still ends with a verified configuration, one more planned each
// time. (27 draws: rounds of 27, 9 and 3 at the default eta 3 and 3 stages; the 3 of the last made to fail, and the
// landscape's races may fail the next ones.)
TEST(Strategies, HalvingVerifiesTheRunnerUpWhereItsWinnerFails) {
  Bench b;
  SearchSettings s;
  s.strategy = "halving";
  s.budget = 27;
  s.seed = 3;
  auto st = make_strategy(*b.space, s);
  std::vector<std::string> failed;  // the verifications made to fail: the first three
  auto measure = [&](const Proposal& p) {
    Observation o = b.measure(p, Objective::Workload);
    if (p.verify && failed.size() < 3 && o.valid) {
      failed.push_back(p.key);
      o.valid = o.verified = false;
      o.failure = "race";
    }
    return o;
  };
  const auto seen = drive(*st, measure, 200);
  EXPECT_TRUE(st->done());
  std::vector<Observation> verifications;
  for (const Observation& o : seen)
    if (o.verify) verifications.push_back(o);
  ASSERT_EQ(failed.size(), 3u);
  // (the round before's next best in their place, until one passes: the landscape's own races fail some of them too)
  ASSERT_GE(verifications.size(), 4u);
  for (size_t i = 0; i + 1 < verifications.size(); ++i) EXPECT_FALSE(verifications[i].valid) << i;
  EXPECT_TRUE(verifications.back().verified);
  EXPECT_EQ(std::count(failed.begin(), failed.end(), verifications.back().key), 0);
  EXPECT_EQ(std::count_if(verifications.begin(), verifications.end(), [](const Observation& o) { return o.verified; }),
            1);
  EXPECT_EQ(st->planned(), seen.size());
}

TEST(Strategies, GridIsLazyAndExact) {
  Bench b;
  SearchSettings s;
  s.strategy = "grid";
  auto grid = make_strategy(*b.space, s);
  EXPECT_EQ(grid->planned(), 56456640u);
  auto first = grid->propose(3, 0);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].knobs, *b.space->at(0));
  for (auto& p : first) {
    EXPECT_TRUE(p.verify);
    EXPECT_EQ(p.origin, "grid");
  }
  auto saved = grid->save();
  EXPECT_LT(saved.dump().size(), 1000u);  // a cursor, not a list
  auto again = restore_strategy(*b.space, saved);
  EXPECT_NE(again->propose(1, 0)[0].key, first[2].key);
}

// The model screens (timed and profiled, no --stagger) and verifies its front: every verification is of a
// configuration screened valid and among the best screened, and the search ends with its best verified.
TEST(Strategies, ModelScreensThenVerifiesItsFront) {
  Bench b;
  SearchSettings s;
  s.strategy = "model";
  s.budget = 40;
  s.seed = 2;
  auto st = make_strategy(*b.space, s);
  auto seen = drive(
      *st, [&](const Proposal& p) { return b.measure(p, Objective::Workload); }, 1000);
  EXPECT_TRUE(st->propose(8, 0).empty());
  EXPECT_TRUE(st->done());
  size_t screens = 0, verifications = 0;
  std::map<std::string, double> screened;
  std::set<std::string> origins;
  for (auto& o : seen) {
    if (o.verify) {
      ++verifications;
      EXPECT_EQ(o.stage, 1u);
      ASSERT_TRUE(screened.count(o.key)) << "verified before it was screened";
    } else {
      ++screens;
      EXPECT_FALSE(o.verified);
      EXPECT_TRUE(o.profile.contains("launches"));
      if (o.valid) screened[o.key] = o.objective_ms;
    }
  }
  EXPECT_EQ(screens, 40u);
  EXPECT_GE(verifications, 3u);
  EXPECT_EQ(st->planned(), screens + verifications);
  // The best screened configuration that passed its verification is verified.
  double best_verified = 1e300;
  for (auto& o : seen)
    if (o.verified) best_verified = std::min(best_verified, o.objective_ms);
  EXPECT_LT(best_verified, 1e300);
  auto state = st->save();
  EXPECT_EQ(state["settings"]["strategy"], "model");
  (void)origins;
}

// The model strategy's first screens are its priors where they are points of the space: on llama.cpp's Q4_K_M mix the
// one with its Q6_K matrices 2 rows a warp (gemv_rows_q6_k) and the chunks' GEMMs in f16 (the measured best of
// session 14), on Q8_0, where that knob has no other value than 0, the first that holds.
// The model strategy's first `n` proposals for a synthesized checkpoint of `preset` and `type` (`mixed`: llama.cpp's
// K-quant mix) on the H200.
std::vector<Proposal> first_screens(const std::string& preset, ggml::Type type, bool mixed, size_t n,
                                    std::optional<synth::Preset> shape = std::nullopt) {
  test::TempDir dir;
  synth::Options o;
  o.preset = preset;
  o.shape = shape;
  o.type = type;
  o.mixed = mixed;
  o.seed = 4;
  synth::write(o, dir / "c.gguf");
  auto space = coord::compiler()->space(dir / "c.gguf", *coord::find_gpu_kind("h200"), 0);
  SearchSettings s;
  s.strategy = "model";
  s.budget = 30;
  s.seed = 1;
  return make_strategy(*space, s)->propose(n, 0);
}

TEST(Strategies, ModelsFirstScreensAreThePriorsTheSpaceHolds) {
  for (const bool mixed : {true, false}) {
    const auto first = first_screens("tiny-llama", mixed ? ggml::Type::Q4_K : ggml::Type::Q8_0, mixed, 1);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].knobs.value("gemv_rows_q6_k", -1), mixed ? 2 : 0) << first[0].knobs.dump();
    EXPECT_EQ(first[0].knobs.value("gemv_rows_per_warp", -1), mixed ? 1 : 2) << first[0].knobs.dump();
    EXPECT_EQ(first[0].knobs.value("gemm_half", false), mixed) << first[0].knobs.dump();
    // (the record's prior names gemv_short, whose domain here is false alone: its variant without it)
    EXPECT_FALSE(first[0].knobs.value("gemv_short", true)) << first[0].knobs.dump();
    EXPECT_EQ(first[0].origin, "prior");
  }
}

// A small model in llama.cpp's Q4_K_M mix takes the small model's priors as written: the record's one split, and the
// same with 16 splits (the tuner's choice for the default workload, session 48), both with the GLU's groups.
TEST(Strategies, ASmallModelsPriorsHoldTheSplitSets) {
  const auto first = first_screens("tiny-qwen3", ggml::Type::Q4_K, true, 12);
  std::set<int> splits;
  for (const auto& p : first)
    if (p.origin == "prior" && p.knobs.value("glu_groups", false) && p.knobs.value("pdl_first", false))
      splits.insert(p.knobs.value("attn_splits", 0));
  EXPECT_TRUE(splits.count(1)) << "the record's set";
  EXPECT_TRUE(splits.count(16)) << "the workload's set";
}

// A mixture's space holds none of the dense priors as written (no gate and up to fuse): their variants without
// fuse_glu are screened, and the mixtures' own set (gemm_half, the f16 cache, attention on the tensor cores, chunks of
// 512 where the context takes them) among the first.
TEST(Strategies, AMixturesFirstScreensAreThePriorsItHolds) {
  for (const char* preset : {"tiny-moe", "tiny-gpt-oss"}) {
    const auto first = first_screens(preset, ggml::Type::Q8_0, false, 8);
    size_t priors = 0;
    bool moe_set = false;
    for (const auto& p : first) {
      if (p.origin != "prior") continue;
      ++priors;
      EXPECT_FALSE(p.knobs.value("fuse_glu", true)) << preset << " " << p.knobs.dump();
      moe_set |= p.knobs.value("gemm_half", false) && p.knobs.value("attn_mma", 0) == 2 &&
                 p.knobs.value("max_chunk", 0) >= 256 && p.knobs.value("gemv_prequant", false);
    }
    EXPECT_GE(priors, 3u) << preset;
    EXPECT_TRUE(moe_set) << preset;
  }
}

// The gemmas' spaces have no folded norms (their post norms); the fused gate/up launches apply their GELU: the priors
// (their variants where a knob's domain is narrower) are their first screens, in both their files' formats.
TEST(Strategies, TheGemmasFirstScreensAreThePriorsTheyHold) {
  for (const char* preset : {"tiny-gemma2", "tiny-gemma3"})
    for (const bool mixed : {true, false}) {
      SCOPED_TRACE(std::string(preset) + (mixed ? " q4_k_m" : " q8_0"));
      const auto first = first_screens(preset, mixed ? ggml::Type::Q4_K : ggml::Type::Q8_0, mixed, 8);
      size_t priors = 0;
      bool record = false;  // (the record's set: int8 with its copy, the fused gate/up, chunks on f16 GEMMs)
      for (const auto& p : first) {
        if (p.origin != "prior") continue;
        ++priors;
        for (const char* off : {"fuse_norm", "norm_fold"})
          EXPECT_FALSE(p.knobs.value(off, false)) << off << " in " << p.knobs.dump();
        record |= p.knobs.value("numerics", std::string()) == "int8" && p.knobs.value("gemv_prequant", false) &&
                  p.knobs.value("fuse_glu", false) && p.knobs.value("gemm_half", false);
      }
      EXPECT_GE(priors, 3u);
      EXPECT_TRUE(record);
    }
}

// Heads the tensor cores cannot hold (past 256 wide: attn_mma's domain is 0 alone) take the priors' attention by
// attn_lanes at their splits, the variant that beat lk_attention 1.8x on gemma2-2b before attn_mma took heads 256 wide:
// every prior among the first screens is one, the record's set among them. Heads 256 wide (the gemmas') on an sm_90
// kind take the priors as written, the attention on the tensor cores.
TEST(Strategies, HeadsTheTensorCoresCannotHoldTakeThePriorsByLanes) {
  synth::Preset wide = synth::preset("tiny-gemma2");
  wide.name = "tiny-gemma2-512";
  wide.head_dim = 512;
  const auto first = first_screens(wide.name, ggml::Type::Q4_K, true, 8, wide);
  size_t priors = 0;
  bool record = false;
  for (const auto& p : first) {
    if (p.origin != "prior") continue;
    ++priors;
    EXPECT_EQ(p.knobs.value("attn_mma", 0), 0) << p.knobs.dump();
    record |= p.knobs.value("attn_lanes", false) && p.knobs.value("numerics", std::string()) == "int8" &&
              p.knobs.value("gemv_prequant", false) && p.knobs.value("fuse_glu", false) &&
              p.knobs.value("gemm_half", false);
  }
  EXPECT_GE(priors, 3u);
  EXPECT_TRUE(record);

  wide.name = "tiny-gemma2-256";
  wide.head_dim = 256;
  size_t on_tensor_cores = 0;
  for (const auto& p : first_screens(wide.name, ggml::Type::Q4_K, true, 8, wide))
    on_tensor_cores += p.origin == "prior" && p.knobs.value("attn_mma", 0) == 2;
  EXPECT_GE(on_tensor_cores, 3u);
}

// Kernel Tuner's simulation mode: a recorded set of configurations (here 1,500 points of the tiny space, measured by
// the lane landscape) and the measurements each strategy takes to reach the set's best verified time. The model
// strategy needs several times fewer than random draws, over several seeds.
TEST(Strategies, ModelReachesTheBestInFewerMeasurementsThanRandom) {
  Bench b;
  test::ListSpace recorded(*b.space, test::draw(*b.space, 1500, 77));
  const Objective objective = Objective::Workload;
  double best = 1e300;
  for (uint64_t i = 0; i < recorded.size(); ++i) {
    auto k = *recorded.at(i);
    auto o = b.measure({k, recorded.key(k), 1, 5, true, false, ""}, objective);
    if (o.verified) best = std::min(best, o.objective_ms);
  }
  ASSERT_LT(best, 1e300);
  const size_t limit = 600;
  auto to_best = [&](const std::string& name, uint64_t seed) {
    SearchSettings s;
    s.strategy = name;
    s.budget = uint32_t(limit);
    s.seed = seed;
    auto st = make_strategy(recorded, s);
    auto reached = [&](const Observation& o) { return o.verified && o.objective_ms <= best * (1 + 1e-12); };
    auto seen = drive(
        *st, [&](const Proposal& p) { return b.measure(p, objective); }, limit, reached);
    return !seen.empty() && reached(seen.back()) ? seen.size() : limit + 1;  // limit + 1: not reached
  };
  std::vector<size_t> model, random;
  for (uint64_t seed : {1, 2, 3, 4}) {
    model.push_back(to_best("model", seed));
    random.push_back(to_best("random", seed));
  }
  const double m = std::accumulate(model.begin(), model.end(), 0.0) / double(model.size());
  const double r = std::accumulate(random.begin(), random.end(), 0.0) / double(random.size());
  RecordProperty("model", testing::PrintToString(model));
  RecordProperty("random", testing::PrintToString(random));
  for (size_t i = 0; i < model.size(); ++i) EXPECT_LE(model[i], limit) << "seed " << i + 1;
  EXPECT_LT(m * 3, r) << "model " << testing::PrintToString(model) << ", random " << testing::PrintToString(random);
}

}  // namespace
}  // namespace lt::coord
