// The tuning database's schema, as an ordered list of migrations applied by PRAGMA user_version.
#include <algorithm>
#include <iterator>
#include <stdexcept>
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

// Migration 3: explicit objectives and workloads, screening and verification, searches as saved strategy state.
// The jobs table is rebuilt (its strategy CHECK names the new strategies) with foreign keys off around the
// migration (migrate() does that), and the views over it recreated.
constexpr const char* kV3 = R"SQL(
DROP VIEW job_progress;
DROP VIEW best_configs;
DROP VIEW run_details;
CREATE TABLE jobs_v3 (
  id              INTEGER PRIMARY KEY,
  checkpoint      TEXT NOT NULL REFERENCES checkpoints(digest),
  gpus            TEXT NOT NULL,          -- comma-separated GPU kinds
  strategy        TEXT NOT NULL CHECK (strategy IN ('grid', 'random', 'halving', 'model', 'fixed')),
  budget          INTEGER NOT NULL DEFAULT 0,
  time_budget_s   REAL NOT NULL DEFAULT 0,
  seed            INTEGER NOT NULL DEFAULT 0,
  state           TEXT NOT NULL CHECK (state IN ('running', 'done', 'cancelled', 'failed')),
  message         TEXT NOT NULL DEFAULT '',
  prompts         TEXT NOT NULL,          -- JSON: the prompts every configuration is judged on
  created_at      REAL NOT NULL,
  finished_at     REAL NOT NULL DEFAULT 0,
  objective       TEXT NOT NULL DEFAULT 'workload' CHECK (objective IN ('workload', 'decode', 'prefill')),
  workload_prompt INTEGER NOT NULL DEFAULT 0,  -- the workload timed: prompt tokens prefilled (0: before migration 3)
  workload_gen    INTEGER NOT NULL DEFAULT 0   -- then tokens generated
);
INSERT INTO jobs_v3 (id, checkpoint, gpus, strategy, budget, time_budget_s, seed, state, message, prompts, created_at,
                     finished_at, objective)
  SELECT id, checkpoint, gpus, strategy, budget, time_budget_s, seed, state, message, prompts, created_at, finished_at,
         'decode' FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_v3 RENAME TO jobs;

ALTER TABLE configurations ADD COLUMN origin TEXT NOT NULL DEFAULT '';
UPDATE configurations SET origin = (SELECT strategy FROM jobs WHERE jobs.id = configurations.job);
ALTER TABLE plans ADD COLUMN verify INTEGER NOT NULL DEFAULT 1;
ALTER TABLE plans ADD COLUMN profile INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN workload_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN objective_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN verified INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN cost TEXT NOT NULL DEFAULT '{}';
UPDATE runs SET objective_ms = median_ms;
CREATE INDEX runs_by_objective ON runs (job, gpu, valid, verified, objective_ms);
CREATE INDEX runs_by_gpu ON runs (gpu, valid, verified);
CREATE INDEX runs_by_search ON runs (job, gpu, id);
CREATE INDEX runs_by_config ON runs (config);
CREATE INDEX configurations_by_key ON configurations (key);
CREATE INDEX plans_by_job ON plans (job, gpu, state);
CREATE INDEX plans_by_deadline ON plans (state, deadline);
CREATE INDEX plans_by_lease ON plans (lease);

CREATE TABLE searches (
  id         INTEGER PRIMARY KEY,
  job        INTEGER NOT NULL REFERENCES jobs(id),
  gpu        TEXT NOT NULL,
  strategy   TEXT NOT NULL,             -- grid | random | halving | model | fixed
  state      TEXT NOT NULL,             -- JSON: the strategy's saved state (cursor, what it proposed, its settings)
  planned    INTEGER NOT NULL,          -- plans the strategy means to measure in all
  note       TEXT NOT NULL DEFAULT '',  -- what it is doing, for the user (warm start, verifying, ...)
  done       INTEGER NOT NULL DEFAULT 0,  -- 1: it proposes nothing more
  updated_at REAL NOT NULL DEFAULT 0,
  UNIQUE (job, gpu)
);
INSERT INTO searches (job, gpu, strategy, state, planned, note, done, updated_at)
  SELECT p.job, p.gpu, j.strategy, '{"strategy":"fixed","legacy":true}', COUNT(*),
         'made before migration 3: the plans made then, nothing more', 1, j.created_at
  FROM plans p JOIN jobs j ON j.id = p.job GROUP BY p.job, p.gpu;

CREATE VIEW run_details AS
  SELECT r.*, c.knobs, c.origin, j.checkpoint, j.objective, j.workload_prompt, j.workload_gen, p.verify,
         CASE WHEN r.valid = 1 AND r.verified = 1 THEN 'verified'
              WHEN r.valid = 1 THEN 'screened'
              ELSE 'failed' END AS verdict,
         CASE WHEN r.median_ms > 0 THEN 1000.0 / r.median_ms ELSE 0 END AS decode_tok_s,
         CASE WHEN r.prefill_ms > 0 AND j.workload_prompt > 0 THEN j.workload_prompt * 1000.0 / r.prefill_ms ELSE 0 END
           AS prefill_tok_s
  FROM runs r JOIN configurations c ON c.id = r.config JOIN jobs j ON j.id = r.job JOIN plans p ON p.id = r.plan;
CREATE VIEW best_configs AS
  SELECT b.job, b.gpu, d.knobs, d.stage, d.repetitions, d.objective, d.objective_ms, d.median_ms, d.spread_ms,
         d.tok_per_s, d.prefill_ms, d.prefill_tok_s, d.workload_ms, d.origin, d.worker_name, d.environment, d.id AS run
  FROM (SELECT s.job, s.gpu,
               (SELECT r.id FROM runs r WHERE r.job = s.job AND r.gpu = s.gpu AND r.valid = 1 AND r.verified = 1
                ORDER BY r.objective_ms, r.id LIMIT 1) AS best
        FROM searches s) b
  CROSS JOIN run_details d ON d.id = b.best;
CREATE VIEW job_progress AS
  SELECT s.job, s.gpu, s.strategy, s.planned, s.note, s.done AS search_done,
         (SELECT COUNT(*) FROM runs r WHERE r.job = s.job AND r.gpu = s.gpu) AS measured,
         (SELECT COUNT(*) FROM runs r WHERE r.job = s.job AND r.gpu = s.gpu AND r.valid = 1 AND r.verified = 1)
           AS verified,
         (SELECT COUNT(*) FROM runs r WHERE r.job = s.job AND r.gpu = s.gpu AND r.valid = 1) AS valid,
         (SELECT COUNT(*) FROM runs r WHERE r.job = s.job AND r.gpu = s.gpu AND r.valid = 0) AS failed,
         (SELECT COUNT(*) FROM plans p WHERE p.job = s.job AND p.gpu = s.gpu AND p.state IN ('pending', 'leased'))
           AS open,
         (SELECT COUNT(*) FROM plans p WHERE p.job = s.job AND p.gpu = s.gpu AND p.state = 'done') AS done
  FROM searches s;
CREATE VIEW warm_starts AS
  SELECT c.job, c.gpu, CAST(substr(c.origin, 6) AS INTEGER) AS from_job, c.knobs, d.verdict, d.objective_ms
  FROM configurations c LEFT JOIN run_details d ON d.config = c.id AND d.stage = 0
  WHERE c.origin LIKE 'warm:%';
)SQL";

// 4: a worker's key (the SHA-256 of the secret its calls carry; empty for workers registered before, who must
// register again).
constexpr const char* kV4 = R"SQL(
ALTER TABLE workers ADD COLUMN key_hash TEXT NOT NULL DEFAULT '';
)SQL";

// 5: the positions a job's lanes hold (0: the model's context, at most 4096: every job before).
constexpr const char* kV5 = R"SQL(
ALTER TABLE jobs ADD COLUMN context INTEGER NOT NULL DEFAULT 0;
)SQL";

// 6: where each run's figures come from, and the job history that compares jobs on measurements of their own. A run
// is `nightly` (a night's job re-measuring a release), `reused` (copied from an earlier run), `replayed` (answered from
// a recording: its environment says "replay": true, as coord::replayed reads it) or `measured`.
constexpr const char* kV6 = R"SQL(
CREATE VIEW run_provenance AS
  SELECT r.id AS run, r.job, r.gpu, r.config, c.key,
         CASE WHEN r.job IN (SELECT job FROM nightly_runs) THEN 'nightly'
              WHEN r.reused_from != 0 THEN 'reused'
              WHEN (CASE WHEN json_valid(r.environment) THEN json_extract(r.environment, '$.replay') END) = 1
                THEN 'replayed'
              ELSE 'measured' END AS provenance
  FROM runs r JOIN configurations c ON c.id = r.config;
CREATE VIEW job_history AS
  SELECT s.job, s.gpu, j.checkpoint, k.name AS checkpoint_name, j.created_at, j.finished_at, j.state, j.strategy,
         j.objective, j.workload_prompt, j.workload_gen, j.context,
         (SELECT COUNT(*) FROM run_provenance p WHERE p.job = s.job AND p.gpu = s.gpu) AS runs,
         (SELECT COUNT(*) FROM run_provenance p WHERE p.job = s.job AND p.gpu = s.gpu AND p.provenance = 'measured')
           AS measured,
         (SELECT COUNT(*) FROM run_provenance p WHERE p.job = s.job AND p.gpu = s.gpu AND p.provenance = 'reused')
           AS reused,
         (SELECT COUNT(*) FROM run_provenance p WHERE p.job = s.job AND p.gpu = s.gpu AND p.provenance = 'replayed')
           AS replayed,
         (SELECT r.id FROM runs r JOIN run_provenance p ON p.run = r.id
          WHERE r.job = s.job AND r.gpu = s.gpu AND r.valid = 1 AND r.verified = 1 AND p.provenance = 'measured'
          ORDER BY r.objective_ms, r.id LIMIT 1) AS best_run
  FROM searches s JOIN jobs j ON j.id = s.job JOIN checkpoints k ON k.digest = j.checkpoint
  WHERE s.job NOT IN (SELECT job FROM nightly_runs);
)SQL";

constexpr const char* kMigrations[] = {kV1, kV2, kV3, kV4, kV5, kV6};
// The migrations that rebuild a table others refer to: foreign keys are off around them (SQLite's recipe).
constexpr int kRebuilds[] = {3};

}  // namespace

int schema_version() {
  return int(std::size(kMigrations));
}

// Applies the migrations the file has not seen, each in its own transaction.
void migrate(Connection& c, int version) {
  auto v = c.prepare("PRAGMA user_version");
  int have = v.next() ? int(v.i64(0)) : 0;
  v.exec();
  if (have > schema_version())
    throw std::runtime_error("database: schema version " + std::to_string(have) + " is newer than this lane-tune's (" +
                             std::to_string(schema_version()) + "); upgrade lane-tune");
  for (int i = have; i < std::min(version, schema_version()); ++i) {
    const bool rebuild = std::find(std::begin(kRebuilds), std::end(kRebuilds), i + 1) != std::end(kRebuilds);
    if (rebuild) c.exec_script("PRAGMA foreign_keys = OFF");
    try {
      Transaction t(c);
      c.exec_script(kMigrations[i]);
      if (rebuild) {
        auto fk = c.prepare("PRAGMA foreign_key_check");
        if (fk.next()) throw std::runtime_error("database: migration " + std::to_string(i + 1) + " broke a reference");
      }
      c.exec_script(("PRAGMA user_version = " + std::to_string(i + 1)).c_str());
      t.commit();
    } catch (...) {
      if (rebuild) c.exec_script("PRAGMA foreign_keys = ON");
      throw;
    }
    if (rebuild) c.exec_script("PRAGMA foreign_keys = ON");
  }
}

}  // namespace lt::db
