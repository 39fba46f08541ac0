// The replay runner answering the coordinator's new plans: a screen runs no --stagger (not verified, a race unseen),
// a verification runs the full checks, the workload's time derived where a recording has none; the lane landscape's
// profiles split into launch families.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "support/test_support.hpp"
#include "worker/runner.hpp"

namespace lt::worker {
namespace {

const std::filesystem::path kFixture =
    std::filesystem::path(LT_SOURCE_DIR) / "tests/service/fixtures/synthetic-h200.json";

LeasedPlan plan_for(const nlohmann::json& knobs, uint32_t reps, bool verify) {
  LeasedPlan p;
  p.gpu = "h200";
  p.knobs = knobs;
  p.repetitions = reps;
  p.verify = verify;
  p.profile = !verify;
  p.workload_prompt = 512;
  p.workload_gen = 128;
  return p;
}

TEST(ReplayPlans, ScreensAreNotVerifiedAndSeeNoRace) {
  auto r = replay_runner(kFixture, 0);
  nlohmann::json fast = {{"attn_splits", 4}, {"cuda_graphs", true}, {"gemv_rows_per_warp", 1},
                         {"gemv_warps", 8},  {"max_chunk", 16},     {"numerics", "dequant"}};
  auto screen = r->prepare(plan_for(fast, 3, false), {})();
  EXPECT_TRUE(screen.valid);
  EXPECT_FALSE(screen.verified);
  EXPECT_FALSE(screen.stagger_equal);
  // The recording has no workload time: the prompt's prefill and 127 decode steps.
  EXPECT_DOUBLE_EQ(screen.workload_ms, 2.1 + 127 * 0.80);
  auto verified = r->prepare(plan_for(fast, 3, true), {})();
  EXPECT_TRUE(verified.valid);
  EXPECT_TRUE(verified.verified);
  EXPECT_TRUE(verified.profile.empty());  // a verification is not profiled again
  auto racy = fast;
  racy["attn_splits"] = 16;
  racy["cuda_graphs"] = false;
  racy["gemv_rows_per_warp"] = 4;
  racy["max_chunk"] = 64;
  auto unseen = r->prepare(plan_for(racy, 3, false), {})();
  EXPECT_TRUE(unseen.valid) << "a screen runs no --stagger";
  auto caught = r->prepare(plan_for(racy, 3, true), {})();
  EXPECT_FALSE(caught.valid);
  EXPECT_EQ(caught.failure, "race");
  EXPECT_FALSE(caught.verified);
}

TEST(ReplayPlans, TheLaneLandscapeProfilesEveryForm) {
  test::TempDir dir;
  std::ofstream(dir / "lane.json") << R"({"format": "lane-tune-results", "version": 1, "job": 0, "synthetic": true,
                                           "gpu": "h200", "landscape": "lane", "runs": []})";
  auto r = replay_runner(dir / "lane.json", 0);
  nlohmann::json k = {{"numerics", "int8"}, {"gemv_prequant", true}, {"gemm_prequant", true}, {"max_chunk", 256}};
  auto a = r->prepare(plan_for(k, 2, false), {})();
  ASSERT_TRUE(a.valid) << a.reason;
  EXPECT_NEAR(a.workload_ms, a.prefill_ms + 127 * a.median_ms, 1e-9);
  std::map<int, double> runs, us;
  for (auto& f : a.profile.at("forms")) runs[f.at("rows").get<int>()] = f.at("runs").get<double>();
  EXPECT_EQ(runs[256], 2);  // 512 prompt tokens in chunks of 256
  EXPECT_EQ(runs[1], 127);
  std::set<std::string> kinds;
  for (auto& l : a.profile.at("launches")) {
    kinds.insert(l.at("kind").get<std::string>());
    us[l.at("rows").get<int>()] += l.at("us").get<double>();
  }
  EXPECT_NEAR(us[1], a.profile.at("total_us").get<double>(), 1e-6);
  EXPECT_NEAR(a.median_ms, us[1] / 1000, 1e-9);
  EXPECT_NEAR(a.prefill_ms, 2 * us[256] / 1000, 1e-9);
  for (const char* kind : {"gemv", "gemm", "quantize", "attention", "attention_fold", "launch_gaps"})
    EXPECT_TRUE(kinds.count(kind)) << kind;
  // A trade-off: side streams prefill faster and decode slower.
  auto side = k;
  side["side_streams"] = true;
  auto b = r->prepare(plan_for(side, 2, false), {})();
  EXPECT_LT(b.prefill_ms, a.prefill_ms);
  EXPECT_GT(b.median_ms, a.median_ms);
  // Deterministic failures: int8 quantized in registers with 4 rows a warp gives wrong results.
  auto wrong = r->prepare(plan_for({{"numerics", "int8"}, {"gemv_rows_per_warp", 4}}, 2, false), {})();
  EXPECT_FALSE(wrong.valid);
  EXPECT_EQ(wrong.failure, "wrong_results");
}

}  // namespace
}  // namespace lt::worker
