// The lane's plan executed on the CPU (lane_sim.hpp) against the CPU reference: every dense tiny preset under knob
// sets that cover the numerics, the chunks, the attention's splits and fold, and the fused launches. An arena slot
// read before any launch of the step wrote it reads the poison (NaN) and fails the comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane_plan.hpp"
#include "compiler/lane_sim.hpp"
#include "compiler/model.hpp"
#include "compiler/reference.hpp"
#include "compiler/synth.hpp"
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
};

TEST_P(LanePlanOnCpu, MatchesTheReference) {
  auto [preset, set] = GetParam();
  TempDir dir;
  synth::Options o;
  o.preset = preset;
  o.seed = 5;
  synth::write(o, dir / "m.gguf");
  const gguf::File file = gguf::File::open(dir / "m.gguf");
  const model::Model m = model::recognize(file);
  const knobs::Knobs k = knobs::Knobs::from_json(kKnobSets[set]);
  const lane::Plan plan = lane::plan(file, m, k, {132, 90});
  reference::Reference ref(file, m, 2);
  std::mt19937 rng(11);
  for (int len : {5, 23, 77}) {
    std::vector<int32_t> prompt(len);
    for (auto& t : prompt) t = int32_t(rng() % m.vocab);
    const reference::Generation want = ref.generate(prompt, 4);
    reference::Generation got;
    if (k.numerics == knobs::Numerics::Precise)
      got = LaneSim<double>(file, plan).generate(prompt, 4);
    else
      got = LaneSim<float>(file, plan).generate(prompt, 4);
    ASSERT_EQ(got.logits.size(), want.logits.size());
    const double err = rel_l2(got.logits, want.logits);
    EXPECT_EQ(got.tokens, want.tokens) << preset << " " << kKnobSets[set].dump() << " prompt " << len;
    EXPECT_LE(err, k.numerics == knobs::Numerics::Precise ? 1e-12 : 1e-5)
        << preset << " " << kKnobSets[set].dump() << " prompt " << len;
  }
}

INSTANTIATE_TEST_SUITE_P(DenseTinyPresets, LanePlanOnCpu,
                         ::testing::Combine(::testing::Values("tiny-llama", "tiny-qwen2", "tiny-qwen3"),
                                            ::testing::Range(0, 4)));

}  // namespace
}  // namespace lt::test
