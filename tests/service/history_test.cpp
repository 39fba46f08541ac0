// The job history and comparisons on the coordinator's core: each job's best of the runs it measured itself, reused,
// replayed and nightly runs left out, and two jobs paired by configuration.
#include <gtest/gtest.h>

#include "coordinator/history.hpp"
#include "core_fixture.hpp"

namespace lt::coord {
namespace {

// A valid, verified run of `ms` per token (the objective: the fixture's jobs time the workload, here `ms` too).
db::Run measured(double ms, const std::string& environment = "{}") {
  db::Run r;
  r.valid = r.verified = r.tokens_equal = r.stagger_equal = true;
  r.median_ms = r.workload_ms = ms;
  r.logits_hash = "00000000000000aa";
  r.environment = environment;
  return r;
}

// A run answered from a recording, as the replay runner reports it.
db::Run replayed(double ms) {
  return measured(ms, R"({"replay": true})");
}

struct Fixture : test::CoreFixture {
  JobHistory history{*core};
  // A job of `seed` drained with configuration `id` taking `scale` * (id + 1) ms.
  int64_t tuned(uint64_t seed, double scale) {
    const int64_t job = submit(seed);
    drain([scale](int id) { return measured(scale * (id + 1)); });
    return job;
  }
};

TEST(History, ListsEachJobsBestOfItsOwnMeasurementsOldestFirst) {
  Fixture f;
  const int64_t first = f.tuned(1, 1.0), second = f.tuned(2, 0.5);
  const auto rows = f.history.list({});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].job, first);
  EXPECT_EQ(rows[1].job, second);
  for (const auto& r : rows) {
    EXPECT_EQ(r.gpu, "h100");
    EXPECT_EQ(r.checkpoint_name, "fake");
    EXPECT_EQ(r.checkpoint.size(), 32u);
    EXPECT_EQ(r.runs, 3u);
    EXPECT_EQ(r.measured, 3u);
    EXPECT_EQ(r.reused + r.replayed, 0u);
    ASSERT_TRUE(r.best.has_value());
    EXPECT_EQ(nlohmann::json::parse(r.best->knobs)["id"], 0);  // the fastest configuration
  }
  EXPECT_DOUBLE_EQ(rows[0].best->objective_ms, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].best->objective_ms, 0.5);
}

// A job whose runs were reused or replayed has no best of its own; a night's job is not in the history at all.
TEST(History, LeavesOutReusedReplayedAndNightlyRuns) {
  Fixture f;
  const int64_t tuned = f.tuned(1, 1.0);
  const int64_t reusing = f.submit(1);  // the same prompts and worker: every run reused at lease time
  EXPECT_EQ(f.drain([](int) -> db::Run { throw std::logic_error("a reused plan reached the worker"); }), 0);
  const int64_t recorded = f.submit(3);
  f.drain([](int id) { return replayed(0.1 * (id + 1)); });
  f.release(tuned);
  const auto night = f.releases->start_night({}, {});
  f.drain([](int) { return measured(0.01); });

  const auto rows = f.history.list({});
  ASSERT_EQ(rows.size(), 3u);  // not the night's job
  EXPECT_EQ(rows[0].job, tuned);
  EXPECT_DOUBLE_EQ(rows[0].best->objective_ms, 1.0);  // not the night's 0.01
  EXPECT_EQ(rows[1].job, reusing);
  EXPECT_EQ(rows[1].runs, 3u);
  EXPECT_EQ(rows[1].reused, 3u);
  EXPECT_EQ(rows[1].measured, 0u);
  EXPECT_FALSE(rows[1].best.has_value());
  EXPECT_EQ(rows[2].job, recorded);
  EXPECT_EQ(rows[2].replayed, 3u);
  EXPECT_EQ(rows[2].measured, 0u);
  EXPECT_FALSE(rows[2].best.has_value());  // 0.1 ms, but answered from a recording
  EXPECT_THROW(f.history.compare(night.rows[0].job, tuned, ""), InvalidArgument);
}

TEST(History, SelectsByCheckpointDigestOrItsFirstDigitsAndByGpuKind) {
  Fixture f;
  f.tuned(1, 1.0);
  const std::string digest = f.history.list({})[0].checkpoint;
  EXPECT_EQ(f.history.list({digest, "", 0}).size(), 1u);
  EXPECT_EQ(f.history.list({digest.substr(0, 6), "h100", 0}).size(), 1u);
  EXPECT_TRUE(f.history.list({digest.substr(0, 6), "a100", 0}).empty());
  EXPECT_TRUE(f.history.list({std::string(digest[0] == '0' ? "1" : "0") + digest.substr(1), "", 0}).empty());
  EXPECT_THROW(f.history.list({"XYZ", "", 0}), InvalidArgument);
  EXPECT_THROW(f.history.list({"a%", "", 0}), InvalidArgument);  // no pattern characters reach the query
  EXPECT_THROW(f.history.list({digest + "0", "", 0}), InvalidArgument);
  EXPECT_THROW(f.history.list({"", "z999", 0}), InvalidArgument);
}

// Without --against, the latest earlier job on the checkpoint; rows pair the same configuration (by key).
TEST(Compare, PairsTheBestAndEachConfigurationWithTheLatestEarlierJob) {
  Fixture f;
  f.tuned(1, 2.0);
  const int64_t earlier = f.tuned(2, 1.0), later = f.tuned(3, 0.5);
  const auto c = f.history.compare(later, 0, "");
  EXPECT_EQ(c.job, later);
  EXPECT_EQ(c.against, earlier);
  ASSERT_EQ(c.rows.size(), 1u + 3u);
  EXPECT_TRUE(c.rows[0].best);
  ASSERT_TRUE(c.rows[0].job && c.rows[0].against);
  EXPECT_DOUBLE_EQ(c.rows[0].job->objective_ms, 0.5);
  EXPECT_DOUBLE_EQ(c.rows[0].against->objective_ms, 1.0);
  for (size_t i = 1; i < c.rows.size(); ++i) {
    const auto& r = c.rows[i];
    EXPECT_FALSE(r.best);
    ASSERT_TRUE(r.job && r.against);
    EXPECT_EQ(r.job->key, r.against->key);
    EXPECT_NE(r.job->config, r.against->config);  // each job's own configuration row
    EXPECT_DOUBLE_EQ(r.against->objective_ms / r.job->objective_ms, 2.0);
  }
  ASSERT_EQ(c.job_rows.size(), 1u);
  EXPECT_EQ(c.job_rows[0].measured, 3u);
  EXPECT_EQ(f.history.compare(later, 1, "h100").against, 1);
}

// A job whose runs were all reused has nothing of its own to compare: its best side is empty and no configuration
// pairs; its history row says why.
TEST(Compare, ReusedRunsAreNotCompared) {
  Fixture f;
  const int64_t tuned = f.tuned(1, 1.0);
  const int64_t reusing = f.submit(1);
  f.drain([](int) { return measured(9); });
  const auto c = f.history.compare(reusing, 0, "");
  EXPECT_EQ(c.against, tuned);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_FALSE(c.rows[0].job.has_value());
  ASSERT_TRUE(c.rows[0].against.has_value());
  EXPECT_EQ(c.job_rows[0].reused, 3u);
}

TEST(Compare, RefusesItselfUnknownJobsNightsAndAJobWithoutAnEarlierOne) {
  Fixture f;
  const int64_t first = f.tuned(1, 1.0);
  EXPECT_THROW(f.history.compare(first, 0, ""), NotFound);  // nothing before it
  EXPECT_THROW(f.history.compare(first, first, ""), InvalidArgument);
  EXPECT_THROW(f.history.compare(99, 0, ""), NotFound);
  EXPECT_THROW(f.history.compare(first, 99, ""), NotFound);
  EXPECT_THROW(f.history.compare(first, 0, "z999"), InvalidArgument);
  const int64_t second = f.tuned(2, 1.0);
  EXPECT_THROW(f.history.compare(second, 0, "a100"), FailedPrecondition);  // not tuned for a100
  // A night's job is skipped when choosing the earlier job, and refused when named.
  f.release(first);
  const auto night = f.releases->start_night({}, {});
  f.drain([](int) { return measured(0.3); });
  const int64_t third = f.tuned(3, 1.0);
  EXPECT_EQ(f.history.compare(third, 0, "").against, second);
  EXPECT_THROW(f.history.compare(third, night.rows[0].job, ""), InvalidArgument);
}

}  // namespace
}  // namespace lt::coord
