// The database: migrations on open, a newer schema refused, and the views over recorded runs.
#include <gtest/gtest.h>

#include "db/store.hpp"
#include "support/test_support.hpp"

namespace lt::db {
namespace {

TEST(Db, MigratesOnceAndRefusesANewerSchema) {
  test::TempDir dir;
  { Store s(dir / "a.db"); }
  Store again(dir / "a.db");
  {
    auto v = again.connection().prepare("PRAGMA user_version");
    ASSERT_TRUE(v.next());
    EXPECT_EQ(v.i64(0), schema_version());
    auto mode = again.connection().prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.next());
    EXPECT_EQ(mode.text(0), "wal");
  }
  again.connection().exec_script("PRAGMA user_version = 999");
  EXPECT_THROW(Store(dir / "a.db"), std::runtime_error);
}

TEST(Db, BestConfigsPicksTheFastestValidRunOfTheLastRound) {
  test::TempDir dir;
  Store s(dir / "b.db");
  s.put_checkpoint({"d", "/x.gguf", 1, "qwen3", "x"});
  Job j;
  j.checkpoint = "d";
  j.gpus = {"h100"};
  int64_t job = s.insert_job(j);
  auto add = [&](const std::string& key, uint32_t stage, double ms, bool valid) {
    int64_t c = s.add_config(job, "h100", key, "{\"k\":\"" + key + "\"}");
    s.add_plan(job, "h100", c, stage, 3);
    Plan p;
    for (auto& x : s.plans(job, "h100"))
      if (x.config == c && x.stage == stage) p = x;
    db::Run r;
    r.plan = p.id;
    r.job = job;
    r.gpu = "h100";
    r.config = c;
    r.stage = stage;
    r.median_ms = ms;
    r.valid = valid;
    r.failure = valid ? "" : "race";
    EXPECT_TRUE(s.insert_run(r));
    EXPECT_FALSE(s.insert_run(r));
  };
  add("a", 0, 1.0, true);
  add("b", 0, 0.5, false);
  add("c", 0, 2.0, true);
  add("c", 1, 1.9, true);
  auto b = s.connection().prepare("SELECT knobs, stage, median_ms FROM best_configs WHERE job = ?1");
  b.bind(1, job);
  ASSERT_TRUE(b.next());
  EXPECT_EQ(b.text(0), "{\"k\":\"c\"}");
  EXPECT_EQ(b.i64(1), 1);
  auto p = s.progress(job);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].planned, 4u);
  EXPECT_EQ(p[0].valid, 3u);
  EXPECT_EQ(p[0].failed, 1u);
}

}  // namespace
}  // namespace lt::db
