// The worker's parts that need no GPU: GPU detection's parsing, timing statistics, the logits checks, the replay
// runner, and child processes killed past their time limit.
#include <gtest/gtest.h>

#include <sys/types.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "compiler/error.hpp"
#include "compiler/knobs.hpp"
#include "support/test_support.hpp"
#include "worker/checks.hpp"
#include "worker/gpu.hpp"
#include "worker/process.hpp"
#include "worker/runner.hpp"

namespace lt::worker {
namespace {

const std::filesystem::path kFixture =
    std::filesystem::path(LT_SOURCE_DIR) / "tests/service/fixtures/synthetic-h200.json";

TEST(Gpu, ParsesNvidiaSmi) {
  auto g = parse_nvidia_smi_line("NVIDIA H200, 550.54.15, 143771 MiB, 1980 MHz, 2619 MHz, 9.0");
  EXPECT_EQ(g.kind, "h200");
  EXPECT_EQ(g.driver, "550.54.15");
  EXPECT_DOUBLE_EQ(g.memory_mib, 143771);
  EXPECT_EQ(g.sm_clock_mhz, 1980);
  EXPECT_EQ(g.arch, 90);
  EXPECT_EQ(g.sms, 132);
  EXPECT_THROW(parse_nvidia_smi_line("No devices were found"), lt::Error);
  EXPECT_THROW(parse_nvidia_smi_line("NVIDIA H200, 550, 1 MiB, 1980 MHz, 2619 MHz, [N/A]"), lt::Error);
  auto mig = parse_nvidia_smi_line("NVIDIA H100 80GB HBM3, 550.54.15, [N/A], [N/A], [N/A], 9.0");
  EXPECT_EQ(mig.kind, "h100");
  EXPECT_EQ(mig.sm_clock_mhz, 0);
}

TEST(Gpu, NamesKinds) {
  EXPECT_EQ(kind_of("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(kind_of("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(kind_of("NVIDIA GH200 480GB"), "gh200");
  EXPECT_EQ(kind_of("NVIDIA L4"), "l4");
  EXPECT_EQ(kind_of("NVIDIA L40S"), "l40s");
  EXPECT_EQ(kind_of("NVIDIA GeForce RTX 4090"), "rtx4090");
}

TEST(Gpu, EnvironmentKeyLeavesOutTheClocks) {
  auto a = parse_nvidia_smi_line("NVIDIA H200, 550.54.15, 143771 MiB, 1980 MHz, 2619 MHz, 9.0");
  auto b = parse_nvidia_smi_line("NVIDIA H200, 550.54.15, 143771 MiB, 1500 MHz, 2619 MHz, 9.0");
  EXPECT_EQ(a.environment_key(), b.environment_key());
  EXPECT_NE(a.environment(), b.environment());
  b.driver = "560.1";
  EXPECT_NE(a.environment_key(), b.environment_key());
}

TEST(Checks, TimingIsMedianAndAbsoluteDeviation) {
  auto t = timing({1.0, 5.0, 2.0, 3.0, 100.0});
  EXPECT_DOUBLE_EQ(t.median, 3.0);
  EXPECT_DOUBLE_EQ(t.spread, 2.0);
  EXPECT_DOUBLE_EQ(t.min, 1.0);
  EXPECT_DOUBLE_EQ(t.max, 100.0);
  EXPECT_DOUBLE_EQ(timing({2.0, 4.0}).median, 3.0);
}

TEST(Checks, ComparesLogitsWithTheReference) {
  std::vector<float> ref = {1, 2, 3, 0, 5, 1}, same = ref, off = {1, 2, 3, 9, 5, 1};
  auto g = compare_logits(same, ref, 3);
  EXPECT_DOUBLE_EQ(g.rel_l2, 0);
  EXPECT_DOUBLE_EQ(g.argmax_agree, 1);
  auto h = compare_logits(off, ref, 3);
  EXPECT_GT(h.rel_l2, 0.5);
  EXPECT_DOUBLE_EQ(h.argmax_agree, 0.5);
  EXPECT_THROW(compare_logits(std::vector<float>{1, 2}, ref, 3), lt::Error);
  EXPECT_EQ(logits_hash(ref), logits_hash(same));
  EXPECT_NE(logits_hash(ref), logits_hash(off));
  EXPECT_EQ(logits_hash(ref).size(), 16u);
  EXPECT_LT(tolerance(knobs::Numerics::Precise).rel_l2, tolerance(knobs::Numerics::Dequant).rel_l2);
}

// The numerics' bounds are pinned (a change to them is a decision, not a side effect), and NaN logits fail the check
// as an infinite error, never as a pass.
TEST(Checks, BoundsArePinnedAndNanLogitsFail) {
  EXPECT_EQ(tolerance(knobs::Numerics::Precise).rel_l2, 1e-9);
  EXPECT_EQ(tolerance(knobs::Numerics::Dequant).rel_l2, 1e-3);
  EXPECT_EQ(tolerance(knobs::Numerics::Int8).rel_l2, 3e-2);
  EXPECT_EQ(tolerance(knobs::Numerics::Int8x2).rel_l2, 1e-3);
  for (auto n : {knobs::Numerics::Precise, knobs::Numerics::Dequant, knobs::Numerics::Int8, knobs::Numerics::Int8x2})
    EXPECT_GE(tolerance(n).argmax_agree, 0.99) << knobs::to_string(n);
  EXPECT_DOUBLE_EQ(tolerance(knobs::Numerics::Int8).tie, 4 * 3e-2);
  EXPECT_EQ(tolerance(knobs::Numerics::Dequant).tie, 0);
  // A compact cache widens a configuration's bound by the cache's, in quadrature (independent errors), and lets it
  // flip near ties.
  knobs::Knobs k;
  EXPECT_EQ(tolerance(k).rel_l2, 1e-3);
  EXPECT_EQ(tolerance(k).tie, 0);
  k.kv_cache = knobs::KvCache::Bf16;
  EXPECT_DOUBLE_EQ(tolerance(k).rel_l2, std::sqrt(1e-6 + 1e-4));
  EXPECT_DOUBLE_EQ(tolerance(k).tie, 4 * tolerance(k).rel_l2);
  k.numerics = knobs::Numerics::Int8;
  k.kv_cache = knobs::KvCache::F16;
  EXPECT_DOUBLE_EQ(tolerance(k).rel_l2, std::sqrt(9e-4 + 1e-6));
  EXPECT_DOUBLE_EQ(tolerance(k).tie, 4 * tolerance(k).rel_l2);
  // Two sources of 3e-2 each (int8 over the 8-bit cache): 4.2e-2, where the larger alone refused lanes whose two
  // errors each kept within their own bound (the CPU plan model's random shapes: 0.0305-0.033).
  k.kv_cache = knobs::KvCache::Q8_0;
  EXPECT_DOUBLE_EQ(tolerance(k).rel_l2, std::sqrt(2 * 9e-4));
  EXPECT_GT(tolerance(k).rel_l2, 0.033);
  EXPECT_LT(tolerance(k).rel_l2, 0.045);
  // gemm_half (a chunk's GEMMs over f16 inputs) widens it the same way, and joins a cache's in quadrature too.
  knobs::Knobs h;
  h.gemm_half = true;
  h.max_chunk = 64;
  EXPECT_DOUBLE_EQ(tolerance(h).rel_l2, std::sqrt(1e-6 + 4e-6));
  EXPECT_DOUBLE_EQ(tolerance(h).tie, 4 * tolerance(h).rel_l2);
  h.kv_cache = knobs::KvCache::Bf16;
  EXPECT_DOUBLE_EQ(tolerance(h).rel_l2, std::sqrt(1e-6 + 4e-6 + 1e-4));
  EXPECT_DOUBLE_EQ(knobs::rounding_bound(h), std::sqrt(4e-6 + 1e-4));
  const std::vector<float> ref = {0, 1, 2, 3, 4, 5};
  std::vector<float> nan = ref;
  nan[4] = std::nanf("");
  const auto a = compare_logits(nan, ref, 3);
  EXPECT_FALSE(a.rel_l2 <= tolerance(knobs::Numerics::Int8).rel_l2);  // infinite (or NaN): never within a bound
  const auto g = compare_generation(nan, ref, 3, {2}, tolerance(knobs::Numerics::Int8).tie);
  EXPECT_FALSE(g.a.rel_l2 <= tolerance(knobs::Numerics::Int8).rel_l2);
}

// A near tie may flip under a lossy numerics: the prompt's rows after the flip are left out; a far flip is not explained.
TEST(Checks, GenerationsAllowNearTiesOnlyWhereTheNumericsDo) {
  // Two prompts of 2 rows each over a vocabulary of 4. Reference rows: the second has a near tie (3.00 vs 2.99).
  const std::vector<float> ref = {0, 5, 1, 1, /**/ 3.00f, 2.99f, 0, 0, /**/ 4, 0, 0, 1, /**/ 0, 0, 6, 1};
  std::vector<float> lane = ref;
  lane[4] = 2.98f;  // prompt 0, row 1: the lane takes the other side of the tie
  lane[5] = 3.01f;
  auto g = compare_generation(lane, ref, 4, {2, 2}, 4 * 3e-2);
  EXPECT_TRUE(g.explained);
  EXPECT_EQ(g.near_ties, 1u);
  EXPECT_EQ(g.rows_compared, 4u);
  EXPECT_DOUBLE_EQ(g.a.argmax_agree, 1);  // the allowed flip counts as agreeing
  auto strict = compare_generation(lane, ref, 4, {2, 2}, 0);  // the exact numerics allow no flip
  EXPECT_FALSE(strict.explained);
  EXPECT_DOUBLE_EQ(strict.a.argmax_agree, 0.75);
  // A flip far from a tie (row 0 of prompt 1: 4 against 0) is never explained, and rows after it are left out.
  std::vector<float> far = ref;
  far[9] = 9;
  auto f = compare_generation(far, ref, 4, {3, 1}, 4 * 3e-2);
  EXPECT_FALSE(f.explained);
  EXPECT_THROW(compare_generation(lane, ref, 4, {2, 1}, 0), lt::Error);
  EXPECT_GT(tolerance(knobs::Numerics::Int8).tie, 0);
  EXPECT_EQ(tolerance(knobs::Numerics::Dequant).tie, 0);
  EXPECT_LT(tolerance(knobs::Numerics::Int8x2).rel_l2, tolerance(knobs::Numerics::Int8).rel_l2);
}

LeasedPlan plan_for(const nlohmann::json& knobs, uint32_t reps) {
  LeasedPlan p;
  p.gpu = "h200";
  p.knobs = knobs;
  p.repetitions = reps;
  return p;
}

TEST(Replay, AnswersFromTheRecording) {
  auto r = replay_runner(kFixture, 0);
  EXPECT_FALSE(r->needs_checkpoint());
  nlohmann::json fast = {{"attn_splits", 4}, {"cuda_graphs", true}, {"gemv_rows_per_warp", 1},
                         {"gemv_warps", 8},  {"max_chunk", 16},     {"numerics", "dequant"}};
  auto a = r->prepare(plan_for(fast, 3), {})();
  EXPECT_TRUE(a.valid);
  EXPECT_DOUBLE_EQ(a.median_ms, 0.80);
  EXPECT_EQ(a.environment["gpu"], "NVIDIA H200");
  EXPECT_TRUE(a.environment["replay"].get<bool>());
  EXPECT_DOUBLE_EQ(r->prepare(plan_for(fast, 9), {})().median_ms, 0.78);   // the longer measurement
  EXPECT_DOUBLE_EQ(r->prepare(plan_for(fast, 27), {})().median_ms, 0.78);  // the longest there is
  auto racy = fast;
  racy["attn_splits"] = 16;
  racy["cuda_graphs"] = false;
  racy["gemv_rows_per_warp"] = 4;
  racy["max_chunk"] = 64;
  auto b = r->prepare(plan_for(racy, 3), {})();
  EXPECT_FALSE(b.valid);
  EXPECT_EQ(b.failure, "race");
  auto unknown = fast;
  unknown["gemv_warps"] = 2;
  auto c = r->prepare(plan_for(unknown, 3), {})();
  EXPECT_FALSE(c.valid);
  EXPECT_EQ(c.failure, failure::kNotRecorded);
  auto g = recorded_gpu(kFixture);
  EXPECT_EQ(g.kind, "h200");
  EXPECT_TRUE(g.replay);
  EXPECT_EQ(g.environment_key().rfind("replay|NVIDIA H200|", 0), 0u);
}

// A synthetic recording (`lane-tune record --synthetic`) holds no runs: every configuration of its GPU kind is answered
// by a made-up measurement drawn from the configuration's key, the same each time.
TEST(Replay, ASyntheticRecordingAnswersEveryConfigurationOfItsKind) {
  test::TempDir dir;
  std::ofstream(dir / "s.json")
      << R"({"format": "lane-tune-results", "version": 1, "job": 0, "synthetic": true, "gpu": "h200", "runs": []})";
  auto r = replay_runner(dir / "s.json", 0);
  std::set<double> times;
  for (int splits : {1, 2, 4, 8, 16}) {
    auto plan = plan_for({{"attn_splits", splits}, {"numerics", "int8"}}, 3);
    auto a = r->prepare(plan, {})();
    auto b = r->prepare(plan, {})();
    EXPECT_EQ(a.median_ms, b.median_ms);
    EXPECT_TRUE(a.valid || !a.failure.empty());
    EXPECT_TRUE(a.environment["replay"].get<bool>());
    times.insert(a.median_ms);
  }
  EXPECT_GT(times.size(), 1u) << "the configurations' times differ";
  // The same configuration written with its defaults spelled out is the same configuration.
  EXPECT_EQ(r->prepare(plan_for({{"attn_splits", 2}}, 3), {})().median_ms,
            r->prepare(plan_for(knobs::Knobs{.attn_splits = 2}.to_json(), 3), {})().median_ms);
  auto other = plan_for({{"attn_splits", 2}}, 3);
  other.gpu = "a100";
  auto c = r->prepare(other, {})();
  EXPECT_FALSE(c.valid);
  EXPECT_EQ(c.failure, failure::kNotRecorded);
  EXPECT_EQ(recorded_gpu(dir / "s.json").kind, "h200");
}

TEST(Replay, RefusesWhatIsNotARecording) {
  test::TempDir dir;
  std::ofstream(dir / "x.json") << R"({"format": "something else"})";
  EXPECT_THROW(replay_runner(dir / "x.json", 0), lt::Error);
  EXPECT_THROW(replay_runner(dir / "missing.json", 0), lt::Error);
}

TEST(Process, CapturesOutputAndExitStatus) {
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
}

// Whether process `pid` still runs: it exists and is not a zombie (a killed orphan waits for init to reap it).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// A shell that starts a grandchild (its pid in `pidfile`) and waits: the whole group must die, the grandchild too.
std::vector<std::string> family(const std::filesystem::path& pidfile) {
  return {"sh", "-c", "sleep 30 & echo $! > " + pidfile.string() + "; sleep 30"};
}

pid_t grandchild(const std::filesystem::path& pidfile) {
  pid_t pid = 0;
  std::ifstream(pidfile) >> pid;
  return pid;
}

// The grandchild is gone within a second of run_process returning (SIGKILL to the group is asynchronous).
bool gone_soon(pid_t pid) {
  for (int i = 0; i < 100 && alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !alive(pid);
}

TEST(Process, KillsTheProcessGroupPastItsTimeLimit) {
  test::TempDir dir;
  auto r = run_process(family(dir / "pid"), 0.5);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 10);
  const pid_t g = grandchild(dir / "pid");
  ASSERT_GT(g, 0);
  EXPECT_TRUE(gone_soon(g)) << "the grandchild " << g << " survived";
}

TEST(Process, KillsTheProcessGroupWhenCancelled) {
  test::TempDir dir;
  std::atomic<bool> cancel{false};
  std::thread t([&] {
    // Cancel once the grandchild has started (its pid written), not after a guessed delay.
    for (int i = 0; i < 500 && grandchild(dir / "pid") <= 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cancel = true;
  });
  auto r = run_process(family(dir / "pid"), 60, &cancel);
  t.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(r.seconds, 10);
  const pid_t g = grandchild(dir / "pid");
  ASSERT_GT(g, 0);
  EXPECT_TRUE(gone_soon(g)) << "the grandchild " << g << " survived";
}

}  // namespace
}  // namespace lt::worker
