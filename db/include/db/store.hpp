// The tuning database's data access: checkpoints, jobs, configurations, plans under leases, runs and workers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite.hpp"

namespace lt::db {

// The schema version this build writes (PRAGMA user_version); older files are migrated on open.
int schema_version();

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
};

// A registered worker: its GPU kind, properties and environment.
struct Worker {
  int64_t id = 0;
  std::string name, gpu, properties = "{}", environment = "{}", environment_key;
  double registered_at = 0, last_seen = 0;
};

// One GPU kind's counts in a job.
struct Progress {
  std::string gpu;
  uint32_t planned = 0, done = 0, valid = 0, failed = 0, open = 0;
  double best_ms = 0;
  std::string best_knobs;
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
  void set_job_state(int64_t id, const std::string& state, const std::string& message, double at);

  // The configuration's id in the job for the GPU kind, added when new.
  int64_t add_config(int64_t job, const std::string& gpu, const std::string& key, const std::string& knobs);
  // Adds the configuration's plan at `stage`; false when it exists already.
  bool add_plan(int64_t job, const std::string& gpu, int64_t config, uint32_t stage, uint32_t repetitions);
  std::optional<Plan> plan(int64_t id);
  std::vector<Plan> plans(int64_t job, const std::string& gpu);
  // Pending plans of running jobs for the GPU kind, oldest job first.
  std::vector<Plan> pending(const std::string& gpu, int limit);
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
  std::vector<Run> runs(int64_t job, const std::string& gpu = "");
  // A run of a job on the same checkpoint and prompts, of the same GPU kind, configuration and repetitions, measured
  // under `env_key`.
  std::optional<Run> reusable(const std::string& checkpoint, const std::string& prompts, const std::string& gpu,
                              const std::string& key, uint32_t repetitions, const std::string& env_key);
  std::vector<Progress> progress(int64_t job);

  int64_t register_worker(const Worker& w);
  std::optional<Worker> worker(int64_t id);
  void touch_worker(int64_t id, double now);

 private:
  Connection c_;
};

}  // namespace lt::db
