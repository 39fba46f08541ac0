// The tuning database's data access: checkpoints, jobs, configurations, plans under leases, runs and workers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite.hpp"

namespace lt::db {

// The schema version this build writes (PRAGMA user_version); older files are migrated on open.
int schema_version();
// Applies the migrations the file has not seen, up to `version` (a Store migrates to schema_version(); tests make
// files of older versions). Throws std::runtime_error for a file newer than this build.
void migrate(Connection& c, int version);

// A checkpoint the coordinator stores or references, by content digest.
struct Checkpoint {
  std::string digest;
  std::string path;
  uint64_t size = 0;
  std::string architecture;
  std::string name;
};

// A tuning job: a checkpoint, the GPU kinds, the search and its state.
struct Job {
  int64_t id = 0;
  std::string checkpoint;
  std::vector<std::string> gpus;
  std::string strategy = "grid";
  uint32_t budget = 0;
  double time_budget_s = 0;
  uint64_t seed = 0;
  std::string state = "running";  // running | done | cancelled | failed
  std::string message;
  std::string prompts = "[]";  // JSON: [{"n_gen":n,"tokens":[...]}, ...]
  double created_at = 0;
  double finished_at = 0;
  std::string objective = "workload";  // workload | decode | prefill
  uint32_t workload_prompt = 0;        // the workload timed: prompt tokens, then tokens generated
  uint32_t workload_gen = 0;
  uint32_t context = 0;  // positions the job's lanes hold (0: the model's context, at most 4096)
};

// A plan: one configuration of a job for one GPU kind at one stage, and its lease.
struct Plan {
  int64_t id = 0;
  int64_t job = 0;
  std::string gpu;
  int64_t config = 0;
  std::string knobs;  // JSON
  std::string key;
  uint32_t stage = 0;
  uint32_t repetitions = 0;
  std::string state = "pending";  // pending | leased | done | skipped
  int64_t lease = 0;
  int64_t worker = 0;
  double deadline = 0;
  int attempts = 0;
  bool verify = true;   // the full checks (--stagger too); false: screened by speed and the logits checks
  bool profile = true;  // every launch timed once (--profile)
  std::string origin;   // why the search proposed the configuration (the configuration's)
};

// A measured plan: timings with spread, profile, checksums, validity and its reason, errors, environment.
struct Run {
  int64_t id = 0;
  int64_t plan = 0;
  int64_t job = 0;
  std::string gpu;
  int64_t config = 0;
  std::string knobs;
  uint32_t stage = 0;
  uint32_t repetitions = 0;
  int64_t worker = 0;
  std::string worker_name;
  std::string environment = "{}";
  std::string environment_key;
  double median_ms = 0, spread_ms = 0, min_ms = 0, max_ms = 0, prefill_ms = 0, tok_per_s = 0, compile_s = 0;
  std::string profile = "{}";
  std::string logits_hash;
  double rel_l2 = 0, argmax_agree = 0;
  bool tokens_equal = false, stagger_equal = false, valid = false;
  std::string reason, failure, error;
  double recorded_at = 0;
  int64_t reused_from = 0;  // the run this one copies (same checkpoint, configuration and environment)
  double workload_ms = 0;   // the workload's time to its last token (median)
  double objective_ms = 0;  // the job's objective for this run, lower is better
  bool verified = false;    // the full checks ran and passed (with valid: a verified run; valid alone: screened)
  std::string cost = "{}";  // JSON: seconds the configuration cost the worker, by part
  // Read with the run, not stored in it: the plan's verify, the configuration's key and origin, the prefill rate of
  // the job's workload prompt (0 when unknown).
  bool verify = true;
  std::string key;
  std::string origin;
  double prefill_tok_s = 0;
};

// One GPU kind's search in a job: its strategy's saved state and how much it plans to measure.
struct Search {
  int64_t job = 0;
  std::string gpu;
  std::string strategy;
  std::string state = "{}";  // JSON
  uint64_t planned = 0;
  std::string note;
  bool done = false;  // it proposes nothing more
  double updated_at = 0;
};

// A verified configuration of another job, a candidate to warm-start a search with.
struct WarmCandidate {
  int64_t job = 0;
  std::string knobs;  // JSON
  double objective_ms = 0;
  bool same_architecture = false;
};

// A registered worker: its GPU kind, properties and environment.
struct Worker {
  int64_t id = 0;
  std::string name, gpu, properties = "{}", environment = "{}", environment_key;
  double registered_at = 0, last_seen = 0;
  std::string key_hash;  // SHA-256 (hex) of the key its calls carry; empty: registered before keys
};

// One GPU kind's counts in a job: what its search plans, what was measured, and the best verified run's figures.
struct Progress {
  std::string gpu;
  uint32_t planned = 0, done = 0, valid = 0, failed = 0, open = 0;
  double best_ms = 0;  // decode ms per token; 0: no verified run yet
  std::string best_knobs;
  uint32_t measured = 0, verified = 0;
  double best_objective_ms = 0, best_prefill_tok_s = 0, best_workload_ms = 0;
  std::string strategy, note;
  // The share of its workers' time spent measuring: the runs' load and run seconds over the span of their results
  // (the first measurement's start to the last record) times the workers that measured (0: nothing measured yet).
  double measuring = 0;
};

// A recorded release: a job's verified winner for a GPU kind, frozen with its figures as the nightly baseline.
struct Release {
  int64_t id = 0;
  int64_t job = 0;
  std::string gpu;
  int64_t run = 0;  // the measurement frozen
  std::string checkpoint;
  std::string knobs;    // JSON
  std::string prompts;  // JSON: the prompts its reference checksum is over
  double median_ms = 0, spread_ms = 0;
  uint32_t repetitions = 0;
  std::string logits_hash;
  std::string directory;  // where export wrote it
  std::string manifest;   // JSON
  double created_at = 0;
};

// One release's row of a night: the job that re-measured it, its baseline, and the verdict once judged.
struct NightRow {
  int64_t release = 0;
  std::string gpu;
  int64_t job = 0;
  double baseline_ms = 0, baseline_spread_ms = 0, median_ms = 0, spread_ms = 0;
  uint32_t repetitions = 0;
  double change_pct = 0;
  int64_t night = 0;                // the night it belongs to
  double started_at = 0;            // when the night started it
  std::string verdict = "pending";  // pending | faster | same | slower | wrong | failed
  std::string reason;
  std::string logits_hash;
};

// A run's figures as the job history and comparisons read them (no profile, no environment).
struct Figures {
  int64_t run = 0, config = 0;
  std::string key, knobs;  // the configuration's key and its knobs (JSON)
  bool verified = false;
  double objective_ms = 0, median_ms = 0, prefill_tok_s = 0, recorded_at = 0;
};

// One job's search on one GPU kind in the job history (the job_history view): the job's particulars, how its runs
// came about (measured by the job itself, reused, replayed), and its best verified run of those it measured itself.
// Nightly jobs are not in the history.
struct HistoryRow {
  int64_t job = 0;
  std::string gpu, checkpoint, checkpoint_name, state, strategy, objective;
  uint32_t workload_prompt = 0, workload_gen = 0, context = 0;
  double created_at = 0;
  uint32_t runs = 0, measured = 0, reused = 0, replayed = 0;
  std::optional<Figures> best;  // none: no verified run measured by the job itself
};

// Which rows of the job history: a checkpoint's digest or its first digits (empty: every checkpoint), a GPU kind
// (empty: every kind), one job (0: every job).
struct HistoryFilter {
  std::string checkpoint;
  std::string gpu;
  int64_t job = 0;
};

// The service's state in numbers at one moment, as the coordinator's metrics show it.
struct Tally {
  // Rows by state; every state the schema allows is present (0 when none).
  std::map<std::string, int64_t> jobs_by_state;   // running | done | cancelled | failed
  std::map<std::string, int64_t> plans_by_state;  // pending | leased | done | skipped
  int64_t leases_held = 0;                        // leased plans whose deadline has not passed
  // Registered workers by GPU kind, then state: busy (holds a live lease), idle (seen within the live window, no
  // lease), gone (not seen within it; a restarted worker registers anew and leaves its old registration gone).
  std::map<std::string, std::map<std::string, int64_t>> workers;
};

// The database, schema migrated on open. Not thread-safe: one Store per thread, or a lock around it.
class Store {
 public:
  explicit Store(const std::filesystem::path& path);
  Connection& connection() { return c_; }

  void put_checkpoint(const Checkpoint& c);
  std::optional<Checkpoint> checkpoint(const std::string& digest);

  int64_t insert_job(const Job& j);
  std::optional<Job> job(int64_t id);
  std::vector<Job> jobs();
  // How many jobs are running.
  size_t running_jobs();
  void set_job_state(int64_t id, const std::string& state, const std::string& message, double at);

  // The configuration's id in the job for the GPU kind, added when new (with `origin`; an existing one keeps its own).
  int64_t add_config(int64_t job, const std::string& gpu, const std::string& key, const std::string& knobs,
                     const std::string& origin = "");
  // Adds the configuration's plan at `stage`; false when it exists already.
  bool add_plan(int64_t job, const std::string& gpu, int64_t config, uint32_t stage, uint32_t repetitions,
                bool verify = true, bool profile = true);
  // How many of the job's plans for the GPU kind are pending or leased (every GPU kind's when `gpu` is empty).
  int open_plans(int64_t job, const std::string& gpu = "");
  // The open plans that hold a search's queue: pending ones and leased screens. A leased verification is left out: it
  // may wait a minute on the CPU reference's verdict (an 8B model's, once a job) after its GPU part, and screens behind
  // it must not wait for it (session 40: 8 of them held an H100 idle 22 s of a 4-minute job).
  int queued_plans(int64_t job, const std::string& gpu);
  std::optional<Plan> plan(int64_t id);
  std::vector<Plan> plans(int64_t job, const std::string& gpu);
  // Pending plans of running jobs for the GPU kind, oldest job first.
  std::vector<Plan> pending(const std::string& gpu, int limit);
  // How many plans of running jobs for the GPU kind are pending.
  int pending_count(const std::string& gpu);
  void lease(int64_t plan, int64_t lease, int64_t worker, double deadline);
  int64_t next_lease_id();
  // Re-queues leased plans whose deadline passed; returns how many.
  int requeue_expired(double now, int max_attempts);
  // Extends the worker's leases to `deadline`; returns the leases it no longer holds.
  std::vector<int64_t> extend(int64_t worker, const std::vector<int64_t>& leases, double deadline);
  // Moves every lease's deadline to at least `deadline` (a restarted coordinator gives workers time to call back).
  void extend_all(double deadline);
  // Marks the job's pending plans skipped (cancel, time budget).
  int skip_pending(int64_t job);

  // Records the plan's run and marks it done; false (and nothing changed) when it has a run already.
  bool insert_run(const Run& r);
  // The job's runs, per GPU kind verified first, then screened, then failed, each by objective.
  std::vector<Run> runs(int64_t job, const std::string& gpu = "");
  std::optional<Run> run(int64_t id);
  // The job's runs on the GPU kind recorded after run `after`, in the order they were recorded.
  std::vector<Run> runs_since(int64_t job, const std::string& gpu, int64_t after);
  // A run of a job on the same checkpoint, prompts and workload, of the same GPU kind, configuration and repetitions,
  // measured under `env_key`; with `verify`, only a run whose plan ran the full checks (a screened run never stands
  // for a verification).
  std::optional<Run> reusable(const std::string& checkpoint, const std::string& prompts, const std::string& gpu,
                              const std::string& key, uint32_t repetitions, const std::string& env_key,
                              uint32_t workload_prompt, uint32_t workload_gen, bool verify);
  // The job's best run on the GPU kind (the best_configs view: verified, valid, smallest objective), if any.
  std::optional<Run> best(int64_t job, const std::string& gpu);
  // The smallest objective of the job's valid runs on the GPU kind, screened or verified; 0 when none.
  double best_objective_ms(int64_t job, const std::string& gpu);
  std::vector<Progress> progress(int64_t job);

  void insert_search(const Search& s);
  std::vector<Search> searches(int64_t job);
  // The searches of running jobs that still propose.
  std::vector<Search> active_searches();
  void update_search(const Search& s);
  // Whether every search of the job is done (true for a job without searches).
  bool searches_done(int64_t job);
  // Verified valid runs on the GPU kind of jobs other than `job`: each job's best `per_job` by its objective, jobs
  // of `architecture` first, then the fastest.
  std::vector<WarmCandidate> warm_candidates(const std::string& gpu, const std::string& architecture, int64_t job,
                                             int per_job, int limit);

  int64_t register_worker(const Worker& w);
  std::optional<Worker> worker(int64_t id);
  void touch_worker(int64_t id, double now);
  // Every registered worker, by id.
  std::vector<Worker> workers();
  // How many plans each worker holds under lease, by worker id (workers holding none left out).
  std::map<int64_t, uint32_t> leases_held();

  // Counts jobs, plans, live leases and workers at time `now`; a worker is live when seen at `live_since` or after.
  Tally tally(double now, double live_since);

  // Releases and nights (db/src/releases.cpp).
  // Records `r` (its id is ignored); returns the release's id.
  int64_t insert_release(const Release& r);
  // Every release, oldest first.
  std::vector<Release> releases();
  std::optional<Release> release(int64_t id);
  // The number the next night takes: one past the last night started (1 for the first).
  int64_t next_night();
  // Adds `row` to `night`, pending, started at `at`.
  void insert_night_row(int64_t night, const NightRow& row, double at);
  // The night's rows by release and GPU kind; empty for a night never started.
  std::vector<NightRow> night_rows(int64_t night);
  // Records the verdict and figures of `row` (found by night, release and GPU kind), judged at `at`.
  void judge_night_row(int64_t night, const NightRow& row, double at);
  // Every night's row of the releases of `job`, by release, then night.
  std::vector<NightRow> release_nights(int64_t job);

  // The job history (db/src/history.cpp).
  // The rows that `f` selects, oldest job first.
  std::vector<HistoryRow> history(const HistoryFilter& f);
  // Each configuration the job measured itself on the GPU kind (no reused, replayed or nightly run), once: its valid
  // run, verified first, then the latest stage, then the fastest; fastest first.
  std::vector<Figures> measured_configurations(int64_t job, const std::string& gpu);
  // Whether `job` is a night's job (re-measuring a release).
  bool nightly_job(int64_t job);

 private:
  Connection c_;
};

}  // namespace lt::db
