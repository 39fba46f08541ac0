// The database: migrations on open (a version-2 file migrated to 3), a newer schema refused, and the views over
// recorded runs.
#include <gtest/gtest.h>

#include <fstream>

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

// A file damaged in its middle (a page overwritten) is refused when opened, naming the damage; nothing is written.
TEST(Db, RefusesADamagedFileAtTheStart) {
  test::TempDir dir;
  const auto path = dir / "d.db";
  {
    Store s(path);
    for (int i = 0; i < 400; ++i)
      s.put_checkpoint({"digest" + std::to_string(i), std::string(200, 'p') + std::to_string(i), 1, "llama", "x"});
  }
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 16u * 4096);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(size / 4096 / 2 * 4096));
    const std::string junk(4096, '\xa5');
    f.write(junk.data(), std::streamsize(junk.size()));
  }
  try {
    Store s(path);
    FAIL() << "a damaged database was opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::filesystem::file_size(path), size);
}

// One query's first row's first column.
int64_t count(Store& s, const std::string& sql) {
  auto q = s.connection().prepare(sql);
  return q.next() ? q.i64(0) : -1;
}

TEST(Db, BestConfigsPicksTheVerifiedRunWithTheSmallestObjective) {
  test::TempDir dir;
  Store s(dir / "b.db");
  s.put_checkpoint({"d", "/x.gguf", 1, "qwen3", "x"});
  Job j;
  j.checkpoint = "d";
  j.gpus = {"h100"};
  j.strategy = "model";
  j.workload_prompt = 512;
  j.workload_gen = 128;
  int64_t job = s.insert_job(j);
  s.insert_search({job, "h100", "model", "{}", 40, "screening", false, 0});
  auto add = [&](const std::string& key, uint32_t stage, double objective, bool valid, bool verified) {
    int64_t c = s.add_config(job, "h100", key, "{\"k\":\"" + key + "\"}", "model");
    s.add_plan(job, "h100", c, stage, 3, verified, true);
    Plan p;
    for (auto& x : s.plans(job, "h100"))
      if (x.config == c && x.stage == stage) p = x;
    db::Run r;
    r.plan = p.id;
    r.job = job;
    r.gpu = "h100";
    r.config = c;
    r.stage = stage;
    r.median_ms = objective / 100;
    r.prefill_ms = objective / 2;
    r.objective_ms = objective;
    r.valid = valid;
    r.verified = verified;
    r.failure = valid ? "" : "race";
    EXPECT_TRUE(s.insert_run(r));
    EXPECT_FALSE(s.insert_run(r));
  };
  add("a", 0, 100, true, false);  // screened: never best, however fast
  add("b", 1, 50, false, false);  // failed its verification
  add("c", 1, 200, true, true);
  add("d", 1, 150, true, true);
  auto b = s.best(job, "h100");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->knobs, "{\"k\":\"d\"}");
  EXPECT_TRUE(b->verified);
  EXPECT_DOUBLE_EQ(b->prefill_tok_s, 512 * 1000.0 / 75);
  EXPECT_EQ(b->origin, "model");
  auto p = s.progress(job);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].planned, 40u);
  EXPECT_EQ(p[0].measured, 4u);
  EXPECT_EQ(p[0].verified, 2u);
  EXPECT_EQ(p[0].valid, 3u);
  EXPECT_EQ(p[0].failed, 1u);
  EXPECT_DOUBLE_EQ(p[0].best_objective_ms, 150);
  EXPECT_EQ(p[0].note, "screening");
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM run_details WHERE verdict = 'screened'"), 1);
}

constexpr const char* kPrompts = R"([{"n_gen":8,"tokens":[1,2]}])";

// The reuse lookup: an earlier run stands for a plan only when it was measured on the same checkpoint, GPU kind,
// environment, prompts, workload and repetitions, failed (if it failed) for a reason of its configuration's own (not
// a lost lease, a timeout, a worker that could not record it, a cancel), and ran the full checks when the plan needs
// them.
TEST(Db, ReuseTakesOnlyARunMeasuredUnderTheSameConditions) {
  test::TempDir dir;
  Store s(dir / "r.db");
  s.put_checkpoint({"ck", "/x.gguf", 1, "qwen3", "x"});
  Job j;
  j.checkpoint = "ck";
  j.gpus = {"h100"};
  j.strategy = "grid";
  j.prompts = kPrompts;
  j.workload_prompt = 512;
  j.workload_gen = 128;
  const int64_t job = s.insert_job(j);
  // A run of configuration `key` (3 repetitions, under environment "env" unless `env` says otherwise).
  const auto add = [&](const std::string& key, const std::string& failure, bool verify,
                       const std::string& env = "env") {
    const int64_t c = s.add_config(job, "h100", key, "{\"k\":\"" + key + "\"}", "grid");
    EXPECT_TRUE(s.add_plan(job, "h100", c, 0, 3, verify, false));
    db::Run r;
    for (auto& p : s.plans(job, "h100"))
      if (p.config == c) r.plan = p.id;
    r.job = job;
    r.gpu = "h100";
    r.config = c;
    r.repetitions = 3;
    r.environment_key = env;
    r.median_ms = 1;
    r.valid = failure.empty();
    r.failure = failure;
    r.reason = failure;
    EXPECT_TRUE(s.insert_run(r));
    return s.connection().last_insert_id();
  };
  const int64_t screened = add("screened", "", false), checked = add("checked", "", true);
  const int64_t race = add("race", "race", false), compile = add("compile", "compile_error", false);
  for (const char* kind : {"lost", "timeout", "not_recorded", "cancelled"}) add(kind, kind, false);
  add("anonymous", "", false, "");
  // What a plan asks of a run, as the run was measured unless one field says otherwise.
  struct Ask {
    std::string checkpoint = "ck", prompts = kPrompts, gpu = "h100", env = "env";
    uint32_t repetitions = 3, prompt = 512, gen = 128;
    bool verify = false;
  };
  const auto reused = [&](const std::string& key, const Ask& a = {}) -> int64_t {
    auto r = s.reusable(a.checkpoint, a.prompts, a.gpu, key, a.repetitions, a.env, a.prompt, a.gen, a.verify);
    return r ? r->id : 0;
  };
  EXPECT_EQ(reused("screened"), screened);
  EXPECT_EQ(reused("checked"), checked);
  EXPECT_EQ(reused("checked", {.verify = true}), checked);  // a verification's run stands for a verification
  EXPECT_EQ(reused("screened", {.verify = true}), 0);       // a screen's does not
  EXPECT_EQ(reused("race"), race);                          // the configuration's own failures are reused
  EXPECT_EQ(reused("compile"), compile);
  for (const char* kind : {"lost", "timeout", "not_recorded", "cancelled"})
    EXPECT_EQ(reused(kind), 0) << kind << ": a failure of the measurement, not of the configuration";
  EXPECT_EQ(reused("screened", {.repetitions = 9}), 0);
  EXPECT_EQ(reused("screened", {.repetitions = 1}), 0);
  EXPECT_EQ(reused("screened", {.prompts = R"([{"n_gen":8,"tokens":[1,3]}])"}), 0);
  EXPECT_EQ(reused("screened", {.env = "env-b"}), 0);
  EXPECT_EQ(reused("anonymous", {.env = ""}), 0);  // an environment that names none is never matched
  EXPECT_EQ(reused("screened", {.checkpoint = "other"}), 0);
  EXPECT_EQ(reused("screened", {.gpu = "a100"}), 0);
  EXPECT_EQ(reused("screened", {.prompt = 1024}), 0);
  EXPECT_EQ(reused("screened", {.gen = 64}), 0);
}

// A file of schema version 2 with a finished job: migration 3 keeps every row, reads old runs as verified with the
// decode objective, and the jobs table takes the new strategies.
TEST(Db, MigratesAVersion2File) {
  test::TempDir dir;
  {
    Connection c(dir / "old.db");
    migrate(c, 2);
    c.exec_script(R"SQL(
      INSERT INTO checkpoints (digest, path, size, architecture, name) VALUES ('d', '/x.gguf', 1, 'qwen3', 'x');
      INSERT INTO jobs (checkpoint, gpus, strategy, state, prompts, created_at) VALUES ('d', 'h100', 'halving', 'done',
        '[]', 5);
      INSERT INTO configurations (job, gpu, key, knobs) VALUES (1, 'h100', 'k1', '{"id":1}'), (1, 'h100', 'k2',
        '{"id":2}');
      INSERT INTO plans (job, gpu, config, stage, repetitions, state) VALUES (1, 'h100', 1, 0, 3, 'done'),
        (1, 'h100', 2, 0, 3, 'done'), (1, 'h100', 1, 1, 9, 'done');
      INSERT INTO runs (plan, job, gpu, config, stage, repetitions, worker, worker_name, environment, environment_key,
        median_ms, spread_ms, min_ms, max_ms, prefill_ms, tok_per_s, compile_s, profile, logits_hash, rel_l2,
        argmax_agree, tokens_equal, stagger_equal, valid, reason, failure, error, recorded_at) VALUES
        (1, 1, 'h100', 1, 0, 3, 1, 'w', '{}', 'e', 2.0, 0, 0, 0, 9, 500, 1, '{}', '', 0, 1, 1, 1, 1, '', '', '', 6),
        (2, 1, 'h100', 2, 0, 3, 1, 'w', '{}', 'e', 1.0, 0, 0, 0, 9, 900, 1, '{}', '', 0, 1, 1, 0, 0, 'race', 'race',
         '', 7),
        (3, 1, 'h100', 1, 1, 9, 1, 'w', '{}', 'e', 1.9, 0, 0, 0, 9, 520, 1, '{}', '', 0, 1, 1, 1, 1, '', '', '', 8);
      INSERT INTO releases (job, gpu, run, checkpoint, knobs, prompts, median_ms, spread_ms, repetitions, logits_hash,
        directory, manifest, created_at) VALUES (1, 'h100', 3, 'd', '{"id":1}', '[]', 1.9, 0, 9, '', '/r', '{}', 9);
    )SQL");
  }
  Store s(dir / "old.db");
  auto job = s.job(1);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->strategy, "halving");
  EXPECT_EQ(job->objective, "decode");
  EXPECT_EQ(job->state, "done");
  auto runs = s.runs(1);
  ASSERT_EQ(runs.size(), 3u);
  for (auto& r : runs) {
    EXPECT_DOUBLE_EQ(r.objective_ms, r.median_ms);
    EXPECT_TRUE(r.verified);
    EXPECT_TRUE(r.verify);
    EXPECT_EQ(r.origin, "halving");
  }
  auto b = s.best(1, "h100");
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->median_ms, 1.9);  // the invalid 1.0 is never best
  auto searches = s.searches(1);
  ASSERT_EQ(searches.size(), 1u);
  EXPECT_TRUE(searches[0].done);
  EXPECT_EQ(searches[0].planned, 3u);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM releases"), 1);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(count(s, "PRAGMA foreign_keys"), 1);
  Job next;
  next.checkpoint = "d";
  next.gpus = {"h100"};
  next.strategy = "model";
  EXPECT_EQ(s.insert_job(next), 2);
  next.strategy = "annealing";
  EXPECT_THROW(s.insert_job(next), std::exception);
}

}  // namespace
}  // namespace lt::db
