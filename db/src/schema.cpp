// The tuning database's schema, as an ordered list of migrations applied by PRAGMA user_version.
#include <iterator>
#include <string>

#include "db/sqlite.hpp"
#include "db/store.hpp"

namespace lt::db {
namespace {

// Migration 1: the tables and views of the first release.
constexpr const char* kV1 = R"SQL(
CREATE TABLE checkpoints (
  digest       TEXT PRIMARY KEY,          -- XXH3-128 of every byte, 32 hex digits
  path         TEXT NOT NULL,             -- where the coordinator reads it
  size         INTEGER NOT NULL,
  architecture TEXT NOT NULL,
  name         TEXT NOT NULL,
  added_at     REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0)
);
CREATE TABLE jobs (
  id            INTEGER PRIMARY KEY,
  checkpoint    TEXT NOT NULL REFERENCES checkpoints(digest),
  gpus          TEXT NOT NULL,            -- comma-separated GPU kinds
  strategy      TEXT NOT NULL CHECK (strategy IN ('grid', 'random', 'halving')),
  budget        INTEGER NOT NULL DEFAULT 0,
  time_budget_s REAL NOT NULL DEFAULT 0,
  seed          INTEGER NOT NULL DEFAULT 0,
  state         TEXT NOT NULL CHECK (state IN ('running', 'done', 'cancelled', 'failed')),
  message       TEXT NOT NULL DEFAULT '',
  prompts       TEXT NOT NULL,            -- JSON: the prompts every configuration is judged on
  created_at    REAL NOT NULL,
  finished_at   REAL NOT NULL DEFAULT 0
);
CREATE TABLE configurations (
  id    INTEGER PRIMARY KEY,
  job   INTEGER NOT NULL REFERENCES jobs(id),
  gpu   TEXT NOT NULL,
  key   TEXT NOT NULL,                    -- the knobs' canonical text
  knobs TEXT NOT NULL,                    -- JSON
  UNIQUE (job, gpu, key)
);
CREATE TABLE plans (
  id          INTEGER PRIMARY KEY,
  job         INTEGER NOT NULL REFERENCES jobs(id),
  gpu         TEXT NOT NULL,
  config      INTEGER NOT NULL REFERENCES configurations(id),
  stage       INTEGER NOT NULL,           -- successive halving's round (0 otherwise)
  repetitions INTEGER NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'done', 'skipped')),
  lease       INTEGER NOT NULL DEFAULT 0,
  worker      INTEGER NOT NULL DEFAULT 0,
  deadline    REAL NOT NULL DEFAULT 0,
  attempts    INTEGER NOT NULL DEFAULT 0,
  UNIQUE (config, stage)
);
CREATE INDEX plans_by_state ON plans (gpu, state, job);
CREATE TABLE workers (
  id              INTEGER PRIMARY KEY,
  name            TEXT NOT NULL,
  gpu             TEXT NOT NULL,
  properties      TEXT NOT NULL,          -- JSON
  environment     TEXT NOT NULL,          -- JSON
  environment_key TEXT NOT NULL,
  registered_at   REAL NOT NULL,
  last_seen       REAL NOT NULL
);
CREATE TABLE runs (
  id              INTEGER PRIMARY KEY,
  plan            INTEGER NOT NULL UNIQUE REFERENCES plans(id),  -- a result is recorded once
  job             INTEGER NOT NULL REFERENCES jobs(id),
  gpu             TEXT NOT NULL,
  config          INTEGER NOT NULL REFERENCES configurations(id),
  stage           INTEGER NOT NULL,
  repetitions     INTEGER NOT NULL,
  worker          INTEGER NOT NULL,
  worker_name     TEXT NOT NULL,
  environment     TEXT NOT NULL,          -- JSON: gpu name, driver, cuda, nvcc, clocks at start, lane-tune version
  environment_key TEXT NOT NULL,
  median_ms       REAL NOT NULL,          -- per decoded token
  spread_ms       REAL NOT NULL,          -- median absolute deviation
  min_ms          REAL NOT NULL,
  max_ms          REAL NOT NULL,
  prefill_ms      REAL NOT NULL,
  tok_per_s       REAL NOT NULL,
  compile_s       REAL NOT NULL,
  profile         TEXT NOT NULL,          -- JSON
  logits_hash     TEXT NOT NULL,          -- xxh64 of the logits' bytes
  rel_l2          REAL NOT NULL,          -- relative L2 error against the precise lane
  argmax_agree    REAL NOT NULL,          -- fraction of positions whose arg-max matches
  tokens_equal    INTEGER NOT NULL,
  stagger_equal   INTEGER NOT NULL,
  valid           INTEGER NOT NULL,
  reason          TEXT NOT NULL,          -- why it is invalid
  failure         TEXT NOT NULL,          -- compile_error | cuda_error | does_not_fit | wrong_results | race | timeout | ...
  error           TEXT NOT NULL,
  recorded_at     REAL NOT NULL,
  reused_from     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_job ON runs (job, gpu, valid, median_ms);
CREATE VIEW run_details AS
  SELECT r.*, c.knobs, j.checkpoint FROM runs r JOIN configurations c ON c.id = r.config JOIN jobs j ON j.id = r.job;
CREATE VIEW best_configs AS
  SELECT job, gpu, knobs, stage, repetitions, median_ms, spread_ms, tok_per_s, worker_name, environment, run
  FROM (SELECT d.*, d.id AS run, ROW_NUMBER() OVER (PARTITION BY d.job, d.gpu ORDER BY d.stage DESC, d.median_ms)
               AS rank
        FROM run_details d WHERE d.valid = 1)
  WHERE rank = 1;
CREATE VIEW job_progress AS
  SELECT p.job, p.gpu, COUNT(*) AS planned,
         SUM(p.state = 'done') AS done,
         (SELECT COUNT(*) FROM runs r WHERE r.job = p.job AND r.gpu = p.gpu AND r.valid = 1) AS valid,
         (SELECT COUNT(*) FROM runs r WHERE r.job = p.job AND r.gpu = p.gpu AND r.valid = 0) AS failed,
         SUM(p.state IN ('pending', 'leased')) AS open
  FROM plans p GROUP BY p.job, p.gpu;
CREATE VIEW failures AS
  SELECT job, gpu, failure, reason, COUNT(*) AS runs FROM runs WHERE valid = 0 GROUP BY job, gpu, failure, reason;
)SQL";

// Migration 2: releases (frozen winners) and the nightly runs that re-measure them.
constexpr const char* kV2 = R"SQL(
CREATE TABLE releases (
  id          INTEGER PRIMARY KEY,
  job         INTEGER NOT NULL REFERENCES jobs(id),
  gpu         TEXT NOT NULL,
  run         INTEGER NOT NULL REFERENCES runs(id),  -- the measurement frozen: the baseline
  checkpoint  TEXT NOT NULL REFERENCES checkpoints(digest),
  knobs       TEXT NOT NULL,              -- JSON
  prompts     TEXT NOT NULL,              -- JSON: the prompts the reference checksums are over
  median_ms   REAL NOT NULL,
  spread_ms   REAL NOT NULL,
  repetitions INTEGER NOT NULL,
  logits_hash TEXT NOT NULL,              -- the reference checksum nightly runs must reproduce
  directory   TEXT NOT NULL,              -- where export wrote it (on the exporting machine)
  manifest    TEXT NOT NULL,              -- JSON: manifest.json as written
  created_at  REAL NOT NULL
);
CREATE TABLE nightly_runs (
  id                 INTEGER PRIMARY KEY,
  night              INTEGER NOT NULL,    -- one `lane-tune nightly` invocation
  release            INTEGER NOT NULL REFERENCES releases(id),
  gpu                TEXT NOT NULL,
  job                INTEGER NOT NULL REFERENCES jobs(id),  -- the job that measured it
  baseline_ms        REAL NOT NULL,
  baseline_spread_ms REAL NOT NULL,
  median_ms          REAL NOT NULL DEFAULT 0,
  spread_ms          REAL NOT NULL DEFAULT 0,
  repetitions        INTEGER NOT NULL DEFAULT 0,
  change_pct         REAL NOT NULL DEFAULT 0,
  logits_hash        TEXT NOT NULL DEFAULT '',
  verdict            TEXT NOT NULL CHECK (verdict IN ('pending', 'faster', 'same', 'slower', 'wrong', 'failed')),
  reason             TEXT NOT NULL DEFAULT '',
  started_at         REAL NOT NULL,
  judged_at          REAL NOT NULL DEFAULT 0,
  UNIQUE (night, release, gpu)
);
CREATE INDEX nightly_by_release ON nightly_runs (release, night);
CREATE VIEW release_history AS
  SELECT n.night, n.release, n.gpu, c.name AS checkpoint, n.baseline_ms, n.median_ms, n.change_pct, n.verdict,
         n.reason, n.started_at
  FROM nightly_runs n JOIN releases r ON r.id = n.release JOIN checkpoints c ON c.digest = r.checkpoint;
)SQL";

constexpr const char* kMigrations[] = {kV1, kV2};

}  // namespace

int schema_version() {
  return int(std::size(kMigrations));
}

// Applies the migrations the file has not seen, each in its own transaction.
void migrate(Connection& c) {
  auto v = c.prepare("PRAGMA user_version");
  int have = v.next() ? int(v.i64(0)) : 0;
  v.exec();
  if (have > schema_version())
    throw std::runtime_error("database: schema version " + std::to_string(have) + " is newer than this lane-tune's (" +
                             std::to_string(schema_version()) + "); upgrade lane-tune");
  for (int i = have; i < schema_version(); ++i) {
    Transaction t(c);
    c.exec_script(kMigrations[i]);
    c.exec_script(("PRAGMA user_version = " + std::to_string(i + 1)).c_str());
    t.commit();
  }
}

}  // namespace lt::db
