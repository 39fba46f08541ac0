// Releases and nights on the coordinator's core: the verdict rule on recorded figures, export's candidate and its
// refusals, recording a release, and a night that measures exactly the release's configuration afresh.
#include <gtest/gtest.h>

#include <fstream>

#include "core_fixture.hpp"

namespace lt::coord {
namespace {

// A measured run as a worker reports it: valid, verified, with the reference's tokens and stable staggered logits.
db::Run measured(double median, double spread, const std::string& hash = "00000000000000aa") {
  db::Run r;
  r.valid = true;
  r.verified = true;
  r.median_ms = median;
  r.spread_ms = spread;
  r.tokens_equal = true;
  r.stagger_equal = true;
  r.logits_hash = hash;
  return r;
}

TEST(Verdict, FasterSameSlowerOnRecordedFigures) {
  Baseline b{1.00, 0.01, "00000000000000aa"};
  VerdictRule rule;  // 5%, 3 spreads
  EXPECT_EQ(judge(b, measured(0.90, 0.01), rule).verdict, "faster");
  EXPECT_EQ(judge(b, measured(1.03, 0.01), rule).verdict, "same");  // under 5%
  EXPECT_EQ(judge(b, measured(0.97, 0.01), rule).verdict, "same");
  auto slower = judge(b, measured(1.10, 0.01), rule);
  EXPECT_EQ(slower.verdict, "slower");
  EXPECT_NEAR(slower.change_pct, 10, 1e-9);
  EXPECT_TRUE(slower.bad());
  EXPECT_FALSE(judge(b, measured(0.90, 0.01), rule).bad());
}

TEST(Verdict, NoisyRunsAreNotRegressions) {
  // 10% slower, but the spreads (MAD 0.03 each, 3 of them: a band of 0.18 ms) cover it.
  Baseline b{1.00, 0.03, "00000000000000aa"};
  EXPECT_EQ(judge(b, measured(1.10, 0.03), {}).verdict, "same");
  // The same figures with a narrower band regress.
  EXPECT_EQ(judge(b, measured(1.10, 0.03), {5, 1}).verdict, "slower");
  // The percentage is configurable.
  EXPECT_EQ(judge({1.00, 0.001, ""}, measured(1.10, 0.001), {15, 3}).verdict, "same");
}

TEST(Verdict, WrongLogitsTokensRacesAndFailures) {
  Baseline b{1.00, 0.01, "00000000000000aa"};
  auto other = judge(b, measured(0.5, 0.01, "00000000000000bb"), {});
  EXPECT_EQ(other.verdict, "wrong");
  EXPECT_NE(other.reason.find("00000000000000bb"), std::string::npos);
  auto tokens = measured(1.0, 0.01);
  tokens.tokens_equal = false;
  EXPECT_EQ(judge(b, tokens, {}).verdict, "wrong");
  auto race = measured(1.0, 0.01);
  race.stagger_equal = false;
  EXPECT_EQ(judge(b, race, {}).verdict, "wrong");
  db::Run invalid;
  invalid.failure = "wrong_results";
  invalid.reason = "rel_l2 0.3 past 1e-3";
  EXPECT_EQ(judge(b, invalid, {}).verdict, "wrong");
  invalid.failure = "cuda_error";
  auto failed = judge(b, invalid, {});
  EXPECT_EQ(failed.verdict, "failed");
  EXPECT_TRUE(failed.bad());
}

using Fixture = test::CoreFixture;

TEST(Releases, CandidateIsTheFastestValidRunAndRefusesWithout) {
  Fixture f;
  int64_t job = f.submit();
  try {
    f.releases->candidate(job, "h100");
    FAIL() << "a job without a valid run has no candidate";
  } catch (const FailedPrecondition& e) {
    EXPECT_NE(std::string(e.what()).find("no valid configuration for h100"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.releases->candidate(job, "a100"), FailedPrecondition);  // not tuned for a100
  EXPECT_THROW(f.releases->candidate(job, "z999"), InvalidArgument);
  EXPECT_THROW(f.releases->candidate(job + 7, "h100"), NotFound);

  f.drain([](int id) {
    if (id != 0) return measured(1.0 + id, 0.01);
    db::Run bad;  // the fastest would be id 0, but it is wrong
    bad.failure = "wrong_results";
    bad.reason = "logits past the tolerance";
    return bad;
  });
  auto c = f.releases->candidate(job, "h100");
  EXPECT_EQ(nlohmann::json::parse(c.run.knobs)["id"], 1);
  EXPECT_EQ(c.checkpoint.name, "fake");
  EXPECT_EQ(c.arch, 90);
  EXPECT_FALSE(c.prompts.empty());
}

// A screened run (timed, no --stagger) is never released, even when it is the fastest valid one.
TEST(Releases, RecordRefusesAScreenedRun) {
  Fixture f;
  JobSpec s;
  s.path = f.checkpoint.string();
  s.gpus = {"h100"};
  s.strategy = "model";
  int64_t job = f.core->submit(s).job.id;
  auto ls = f.core->lease(f.worker, 1);
  ASSERT_EQ(ls.size(), 1u);
  ASSERT_FALSE(ls[0].plan.verify);
  auto screened = measured(0.5, 0.01);
  screened.verified = true;  // what the worker says; the plan asked for a screen only
  f.core->report(f.worker, ls[0].plan.id, ls[0].plan.lease, screened);
  auto runs = f.core->results(job, "h100", 0);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].verified);
  EXPECT_THROW(f.releases->candidate(job, "h100"), FailedPrecondition);  // no verified run yet
  try {
    f.releases->record(job, "h100", runs[0].id, (f.dir / "rel").string(), "{}");
    ADD_FAILURE() << "a screened run was released";
  } catch (const FailedPrecondition& e) {
    EXPECT_NE(std::string(e.what()).find("screened, not verified"), std::string::npos) << e.what();
  }
}

TEST(Releases, RecordValidatesAndStoresTheBaseline) {
  Fixture f;
  int64_t job = f.submit();
  f.drain([](int id) { return measured(1.0 + id, 0.02); });
  auto c = f.releases->candidate(job, "h100");
  EXPECT_THROW(f.releases->record(job, "h100", c.run.id, "/tmp/x", "not json"), InvalidArgument);
  EXPECT_THROW(f.releases->record(job, "h100", c.run.id, "", "{}"), InvalidArgument);
  EXPECT_THROW(f.releases->record(job, "h100", 999, "/tmp/x", "{}"), NotFound);
  EXPECT_TRUE(f.releases->list().empty());
  int64_t id = f.release(job);
  auto all = f.releases->list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, id);
  EXPECT_DOUBLE_EQ(all[0].median_ms, 1.0);
  EXPECT_DOUBLE_EQ(all[0].spread_ms, 0.02);
  EXPECT_EQ(all[0].logits_hash, "00000000000000aa");
}

TEST(Releases, NightMeasuresExactlyTheReleaseAfreshAndJudgesIt) {
  Fixture f;
  int64_t job = f.submit();
  f.drain([](int id) { return measured(1.0 + id, 0.01); });
  f.release(job);

  auto night = f.releases->start_night({}, {});
  ASSERT_EQ(night.rows.size(), 1u);
  EXPECT_EQ(night.rows[0].verdict, "pending");
  // The same worker (same environment) gets the plan: nothing is reused from the tuning job.
  auto ls = f.core->lease(f.worker, 8);
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(ls[0].plan.knobs)["id"], 0);
  EXPECT_EQ(ls[0].plan.job, night.rows[0].job);
  EXPECT_EQ(f.releases->judge_night(night.night, {}).rows[0].verdict, "pending");
  f.core->report(f.worker, ls[0].plan.id, ls[0].plan.lease, measured(1.2, 0.01));
  auto judged = f.releases->judge_night(night.night, {});
  EXPECT_EQ(judged.rows[0].verdict, "slower");
  EXPECT_NEAR(judged.rows[0].change_pct, 20, 1e-9);

  // The next night is a new one, measured afresh again; a night with logits of its own is wrong.
  auto next = f.releases->start_night({}, {"h100"});
  EXPECT_EQ(next.night, night.night + 1);
  auto again = f.core->lease(f.worker, 8);
  ASSERT_EQ(again.size(), 1u);
  f.core->report(f.worker, again[0].plan.id, again[0].plan.lease, measured(1.0, 0.01, "00000000000000cc"));
  EXPECT_EQ(f.releases->judge_night(next.night, {}).rows[0].verdict, "wrong");

  EXPECT_THROW(f.releases->start_night({}, {"a100"}), FailedPrecondition);  // no release for a100
  EXPECT_THROW(f.releases->start_night({42}, {}), NotFound);
  EXPECT_THROW(f.releases->judge_night(99, {}), NotFound);
}

TEST(Releases, UnfinishedNightRunsAreJudgedFailed) {
  Fixture f;
  int64_t job = f.submit();
  f.drain([](int id) { return measured(1.0 + id, 0.01); });
  f.release(job);
  auto night = f.releases->start_night({}, {});
  f.core->cancel(night.rows[0].job);  // what `lane-tune nightly` does past its --timeout
  auto judged = f.releases->judge_night(night.night, {});
  EXPECT_EQ(judged.rows[0].verdict, "failed");
  EXPECT_NE(judged.rows[0].reason.find("cancelled"), std::string::npos) << judged.rows[0].reason;
}

}  // namespace
}  // namespace lt::coord
