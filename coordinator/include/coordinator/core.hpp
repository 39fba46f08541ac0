// The coordinator's core: jobs, plans under leases, idempotent results, all in SQLite; the gRPC server calls it.
#pragma once

#include "compiler/digest.hpp"

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compiler/error.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/objective.hpp"
#include "coordinator/space.hpp"
#include "coordinator/strategy.hpp"
#include "db/store.hpp"

namespace lt::coord {

// A request the coordinator refuses as malformed (INVALID_ARGUMENT on the wire).
class InvalidArgument : public lt::Error {
 public:
  using lt::Error::Error;
};
// A request that cannot be served in the current state (FAILED_PRECONDITION on the wire): e.g. a result for a plan
// whose lease expired or whose job ended.
class FailedPrecondition : public lt::Error {
 public:
  using lt::Error::Error;
};
// A limit reached (RESOURCE_EXHAUSTED on the wire): e.g. too many Watch streams at once.
class ResourceExhausted : public lt::Error {
 public:
  using lt::Error::Error;
};
// A caller acting on what is not its own (PERMISSION_DENIED on the wire): e.g. a result for a plan leased to another
// worker.
class PermissionDenied : public lt::Error {
 public:
  using lt::Error::Error;
};
// A job, worker, plan or checkpoint the coordinator does not know (NOT_FOUND on the wire).
class NotFound : public lt::Error {
 public:
  using lt::Error::Error;
};

// The coordinator's settings.
struct Options {
  std::filesystem::path data_dir;  // uploaded checkpoints live in data_dir/checkpoints/<digest>.gguf
  double lease_s = 30;             // a lease's length; a heartbeat extends it by as much
  double time_limit_s = 600;       // how long a lane may run before the worker kills it
  uint32_t warmup = 1;
  std::vector<uint64_t> stagger_seeds = {1, 2, 3};
  int max_attempts = 3;  // leases a plan may lose before it is given up
  SearchOptions search;
  // lease() and report() replenish the searches themselves (the bare core, in tests); the server runs replenish() on
  // a thread of its own instead, so that no lease waits on a strategy.
  bool replenish_inline = false;
  bool warm_start = true;  // the model strategy starts from other jobs' verified configurations on the GPU kind
  // A job with a time budget closes its last stretch, max(closing_min_s, closing_share of the budget), to screens:
  // only verifications are leased then.
  // (A worker measures a prepared verification ahead of the screens it holds, so a short stretch suffices: on the
  // H200, the 8B's verifications take ~8 s, and a longer stretch left the GPU idle once the front was verified.)
  double closing_min_s = 20;
  double closing_share = 0.05;
  // A screen stops after the workload's first run (a warm-up) when its objective is past cutoff_factor times the
  // job's best on the GPU kind: its figures are that run's (an estimate), enough to rank it far behind. 0: never.
  double cutoff_factor = 1.5;
  uint64_t max_upload_bytes = uint64_t(1) << 40;  // an uploaded checkpoint's size at most (1 TiB)
  // Folders whose checkpoints a job may name by path (symbolic links resolved first; read once into the store, no
  // upload over the wire); none: jobs name uploaded checkpoints only.
  std::vector<std::filesystem::path> path_roots;
  // Jobs running at once at most (0: no limit): a submit past it is refused (resource exhausted) until one ends, so
  // that a client cannot grow the plans and searches the coordinator keeps without bound.
  uint32_t max_running_jobs = 64;
};

// A tuning job to start.
struct JobSpec {
  std::string digest;  // a stored checkpoint, or
  std::string path;    // a checkpoint the coordinator can read
  std::vector<std::string> gpus;
  std::string strategy = "model";  // grid | random | halving | model
  uint32_t budget = 0;
  double time_budget_s = 0;
  uint64_t seed = 0;
  std::string objective = "workload";  // workload | decode | prefill
  std::optional<Workload> workload;    // none: the default, shrunk to fit the lane's context
  uint32_t context = 0;                // positions the lanes hold (0: the model's context, at most 4096)
};

// A job's state and progress per GPU kind, and its checkpoint's name (general.name).
struct JobStatus {
  db::Job job;
  std::vector<db::Progress> gpus;
  double time_left_s = -1;
  std::string checkpoint_name;
};

// How a registered worker stands now: busy (holding leases), idle (calling, holding none) or gone (silent for longer
// than a lease: stopped, or cut off).
enum class WorkerState { Busy, Idle, Gone };
const char* to_string(WorkerState s);
// The state named `name` (to_string's words); throws InvalidArgument for another.
WorkerState parse_worker_state(const std::string& name);

// A registered worker as the coordinator sees it now: its row, its state, the plans it holds under lease and how long
// ago it last called (by the coordinator's clock).
struct WorkerStatus {
  db::Worker worker;
  WorkerState state = WorkerState::Idle;
  uint32_t leases = 0;
  double seen_ago_s = 0;
};

// A prompt every configuration of a job is checked on: its tokens, then `n_gen` tokens generated.
struct CheckPrompt {
  uint32_t n_gen = 0;
  std::vector<int32_t> tokens;
};

// A plan handed to a worker under a lease: what to measure (plan.verify: the full checks; plan.profile: every launch
// timed once) on which workload.
struct Lease {
  db::Plan plan;
  std::string checkpoint;
  uint64_t checkpoint_size = 0;
  std::string checkpoint_path;  // where the coordinator reads it: a worker that sees this path need not fetch it
  // A screen's cutoff (empty cutoff_on: none): the objective's figure, Options::cutoff_factor, and the job's best
  // objective on the GPU kind so far (0: none yet).
  std::string cutoff_on;
  double cutoff_factor = 0;
  double best_ms = 0;
  std::vector<CheckPrompt> prompts;
  uint32_t warmup = 0;
  std::vector<uint64_t> stagger_seeds;
  double time_limit_s = 0;
  Workload workload;
};

// A checkpoint being uploaded: bytes appended in order, then stored by content digest.
class Upload {
 public:
  // At most `limit` bytes; the first four must be GGUF's magic. A refused or abandoned upload leaves nothing behind.
  explicit Upload(const std::filesystem::path& dir, uint64_t limit = UINT64_MAX);
  ~Upload();
  // Throws InvalidArgument for a chunk out of order, past the limit, or a file that does not start as GGUF does.
  void append(uint64_t offset, const std::string& bytes);
  // Closes the file; returns its content digest (XXH3-128, 32 hex digits) and leaves it at `dir`/<digest>.gguf.
  std::string finish();
  uint64_t size() const { return size_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t size_ = 0;
};

// Reads the file at `path` into `u` through one descriptor opened here, so that the upload is what was read whatever
// happens to the file meanwhile. Throws PermissionDenied when the descriptor leads elsewhere than `path` (a link
// swapped in since `path` was resolved), InvalidArgument when the file cannot be read, is not a regular file, or
// changed while it was read (its size or modification time), and what Upload::append throws (the limit, the magic).
// REQUIRES: `path` is canonical.
void read_into(Upload& u, const std::filesystem::path& path);

using lt::content_digest;  // compiler/digest.hpp

// The coordinator: every method is one transaction on the database and safe to call from several threads.
// The prompts every configuration of a job is judged on (tokens and logits against the precise lane): lengths that
// cross the prefill chunk sizes, 8 tokens generated each, tokens below `vocab` drawn from `seed`; as JSON
// [{"n_gen": 8, "tokens": [...]}, ...].
nlohmann::json check_prompts(uint32_t vocab, uint64_t seed);
// The prompts check_prompts made, read back from their JSON as a job stores them; throws lt::Error saying what is
// wrong with text that is not such a list.
std::vector<CheckPrompt> read_check_prompts(const std::string& json);

class Coordinator {
 public:
  using Clock = std::function<double()>;  // seconds since the epoch
  Coordinator(const std::filesystem::path& db_path, Options o, std::unique_ptr<Compiler> compiler,
              Clock clock = nullptr);

  // Stores an uploaded checkpoint after checking it is one lane-tune can compile; returns its digest.
  std::string add_checkpoint(Upload& u);
  std::filesystem::path checkpoint_path(const std::string& digest);
  std::filesystem::path upload_dir() const;

  // Starts a job: validates the request (the objective, the strategy and the workload first), creates the job and a
  // search per GPU kind, and takes each search's first small batch of plans; never lists the knob space. A checkpoint
  // named by path (under Options::path_roots) is read once into the store as an upload is (read_into) and is that copy
  // from then on.
  JobStatus submit(const JobSpec& spec);
  JobStatus status(int64_t job);
  std::vector<JobStatus> list();
  std::vector<db::Run> results(int64_t job, const std::string& gpu, uint32_t top);
  // The best run per GPU kind: verified, valid, with the smallest objective (the best_configs view).
  std::vector<db::Run> best(int64_t job, const std::string& gpu);
  JobStatus cancel(int64_t job);

  // The registered workers by id: every GPU kind's (empty `gpu`) or one kind's, and those gone only with
  // `include_gone`. Throws InvalidArgument for a GPU kind it does not know (names are canonical: h200, not H200).
  std::vector<WorkerStatus> workers(const std::string& gpu, bool include_gone);
  // Registers a worker; with `key`, also its key (kept as a SHA-256), which its later calls must present.
  int64_t register_worker(const db::Worker& w, std::string* key = nullptr);
  // Refuses (PermissionDenied) a call naming `worker` whose key is not the one it was given at registration (compared
  // in constant time); NotFound for a worker not registered, or registered before keys (it registers again).
  void check_worker_key(int64_t worker, std::string_view key);
  // Up to `max` plans for the worker's GPU kind; results measured before under its environment are reused on the way.
  // A stored row that cannot be read fails what it belongs to, never the call: a job's (its prompts, its objective,
  // its checkpoint) fails the job, a configuration's (its knobs) fails its plan with a kBadPlan run.
  // `verifications_only`: the pending verifications alone, the screens left pending (a worker whose plans are all
  // still building asks so, and its GPU verifies a search's front meanwhile).
  std::vector<Lease> lease(int64_t worker, uint32_t max, bool verifications_only = false);
  // Extends the worker's leases; returns those it no longer holds.
  std::vector<int64_t> heartbeat(int64_t worker, const std::vector<int64_t>& leases);
  // Records a plan's result once; false for a duplicate.
  bool report(int64_t worker, int64_t plan, int64_t lease, db::Run result);

  // Re-queues expired leases and ends jobs that are complete or past their time budget.
  void tick();
  // Tops up every running search's queue (its pending and leased plans) to the target: feeds each strategy the
  // results recorded since, asks it for candidates outside the database lock, and stores them with its saved state
  // in one transaction. One replenish runs at a time; a strategy restored after a restart is fed every result again.
  void replenish();
  // Called (outside the lock) when a lease finds a queue low or a report arrives: the server wakes its replenisher.
  void on_wanted(std::function<void()> wake) { wake_ = std::move(wake); }
  const Options& options() const { return o_; }
  // The service's state in numbers, what /metrics shows: the database's counts (one read under the lock; a worker is
  // live when seen within a lease's length) with the lease latencies and measurements observed since the core
  // started.
  Metrics metrics();
  // Runs `f(store, now)` on the database under the coordinator's lock (the releases' core, releases.cpp).
  template <class F>
  auto with_store(F&& f) {
    std::lock_guard lock(m_);
    return f(store_, now());
  }
  Compiler& compiler() { return *compiler_; }

  // A search ready to be stored with its job: its strategy, the first candidates it proposed and a note.
  struct NewSearch {
    std::string gpu;
    std::unique_ptr<SearchSpace> space;
    std::unique_ptr<Strategy> strategy;
    std::vector<Proposal> first;
    std::string note;
  };
  // Stores `s` for `job` in the caller's transaction (REQUIRES: the store's lock held): its searches row and its
  // first plans.
  static void store_search(db::Store& store, int64_t job, NewSearch& s, double now);

 private:
  double now() const { return clock_(); }
  // Finishes `u` into the store's folder (<digest>.gguf) and holds that file for the caller; returns the digest.
  std::string hold_file(Upload& u);
  // Lets go of a held file: removed once nobody holds it, unless a stored checkpoint names it by then (an upload or a
  // path's copy that was refused).
  void release_file(const std::string& digest);
  JobStatus status_locked(int64_t job);
  void check_budget_locked(const db::Job& j);
  // Throws ResourceExhausted when Options::max_running_jobs jobs run already.
  void check_running_jobs_locked();
  // Whether job `j` is in its closing phase at time `at` (see Options::closing_min_s).
  bool closing(const db::Job& j, double at) const;
  // Ends plan `p` failed (a kBadPlan run saying `why`, measured by no worker) in the caller's transaction.
  void fail_plan_locked(const db::Plan& p, const std::string& why, double at);
  // Ends the job when every search is done and no plan is open.
  void check_complete_locked(int64_t job);
  std::vector<db::Run> best_locked(int64_t job, const std::string& gpu);
  void wanted();
  // The queue a search of `gpu` keeps: max(queue, 2 x the plans its leasing workers ask for at once).
  size_t target_locked(const std::string& gpu);
  // The run as a strategy sees it.
  static Observation observe(const db::Run& r);
  // Other jobs' verified configurations on the GPU kind, for the model strategy's warm start.
  std::vector<Seed> warm_seeds_locked(const std::string& gpu, const std::string& architecture);

  // A search's strategy held between replenishes, and the last run it was fed.
  struct Live {
    std::unique_ptr<SearchSpace> space;
    std::unique_ptr<Strategy> strategy;
    int64_t fed = 0;
  };
  struct Leasing {
    std::string gpu;
    uint32_t max = 0;
    double at = 0;
  };

  std::mutex m_;
  db::Store store_;
  Options o_;
  std::unique_ptr<Compiler> compiler_;
  Clock clock_;
  std::function<void()> wake_;
  std::map<int64_t, Leasing> leasing_;  // by worker, under m_
  std::map<std::string, int> held_;     // files in the store's folder by digest, and how many calls hold each; under m_
  // What the core observes for its metrics (metrics.cpp): Lease calls' durations, measurements recorded by GPU kind
  // since the start and in the last minute (their times, oldest first); under its own lock, taken after m_ if both.
  struct Observed {
    std::mutex m;
    Histogram lease_latency = lease_latency_histogram();
    std::map<std::string, uint64_t> measurements;
    std::deque<std::pair<double, std::string>> recent;
  };
  void observe_lease(double seconds);
  void observe_measurement(const std::string& gpu, double at);
  Observed observed_;
  std::mutex replenish_m_;  // one replenish at a time; guards lives_
  std::map<std::pair<int64_t, std::string>, Live> lives_;
};

}  // namespace lt::coord
