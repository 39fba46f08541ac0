// The coordinator's core: submitting jobs, leasing plans, recording results and advancing searches.
#include "coordinator/core.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

namespace lt::coord {
namespace {

double system_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The prompts every configuration of a job is judged on: lengths that cross the prefill chunk sizes.
nlohmann::json make_prompts(uint32_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::uniform_int_distribution<int32_t> token(0, int32_t(vocab) - 1);
  nlohmann::json prompts = nlohmann::json::array();
  for (int len : {1, 7, 20, 45}) {
    std::vector<int32_t> t(static_cast<size_t>(len));
    for (auto& x : t) x = token(rng);
    prompts.push_back({{"n_gen", 8}, {"tokens", t}});
  }
  return prompts;
}

bool is_digest(const std::string& d) {
  return d.size() == 32 && d.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool finite_nonneg(double x) {
  return std::isfinite(x) && x >= 0;
}

}  // namespace

Coordinator::Coordinator(const std::filesystem::path& db_path, Options o, std::unique_ptr<Compiler> compiler,
                         Clock clock)
    : store_(db_path), o_(std::move(o)), compiler_(std::move(compiler)), clock_(clock ? clock : system_now) {
  if (o_.data_dir.empty()) o_.data_dir = db_path.parent_path() / "lane-tune-data";
  std::filesystem::create_directories(upload_dir());
  store_.extend_all(now() + o_.lease_s);
}

std::filesystem::path Coordinator::upload_dir() const {
  return o_.data_dir / "checkpoints";
}

std::string Coordinator::add_checkpoint(Upload& u) {
  std::string d = u.finish();
  auto path = upload_dir() / (d + ".gguf");
  CheckpointInfo info;
  try {
    info = compiler_->inspect(path);
  } catch (const std::exception& e) {
    std::lock_guard lock(m_);
    if (!store_.checkpoint(d)) std::filesystem::remove(path);
    throw InvalidArgument(std::string("not a checkpoint lane-tune can compile: ") + e.what());
  }
  std::lock_guard lock(m_);
  store_.put_checkpoint({d, path.string(), u.size(), info.architecture, info.name});
  return d;
}

std::filesystem::path Coordinator::checkpoint_path(const std::string& digest) {
  if (!is_digest(digest)) throw InvalidArgument("'" + digest + "' is not a checkpoint digest (32 hex digits)");
  std::lock_guard lock(m_);
  auto c = store_.checkpoint(digest);
  if (!c) throw NotFound("no checkpoint with digest " + digest);
  return c->path;
}

JobStatus Coordinator::submit(const JobSpec& spec) {
  if (spec.gpus.empty()) throw InvalidArgument("a job needs at least one GPU kind (--gpus)");
  std::set<std::string> seen;
  for (auto& g : spec.gpus) {
    if (!find_gpu_kind(g)) {
      std::string known;
      for (auto& n : gpu_kind_names()) known += " " + n;
      throw InvalidArgument("unknown GPU kind '" + g + "' (known:" + known + ")");
    }
    if (!seen.insert(g).second) throw InvalidArgument("GPU kind '" + g + "' named twice");
  }
  if (!known_strategy(spec.strategy))
    throw InvalidArgument("unknown strategy '" + spec.strategy + "' (grid, random, halving)");
  if (!std::isfinite(spec.time_budget_s) || spec.time_budget_s < 0)
    throw InvalidArgument("the time budget must be a positive number of seconds");
  if (spec.digest.empty() == spec.path.empty())
    throw InvalidArgument("a job names its checkpoint by digest or by path, exactly one");

  db::Checkpoint ck;
  if (!spec.digest.empty()) {
    if (!is_digest(spec.digest))
      throw InvalidArgument("'" + spec.digest + "' is not a checkpoint digest (32 hex digits)");
    std::lock_guard lock(m_);
    auto c = store_.checkpoint(spec.digest);
    if (!c) throw NotFound("no checkpoint with digest " + spec.digest + " (upload it first)");
    ck = *c;
  } else {
    std::filesystem::path p(spec.path);
    if (!p.is_absolute()) throw InvalidArgument("a checkpoint path must be absolute: " + spec.path);
    if (!std::filesystem::is_regular_file(p)) throw InvalidArgument("the coordinator cannot read " + spec.path);
    CheckpointInfo info;
    try {
      info = compiler_->inspect(p);
    } catch (const std::exception& e) {
      throw InvalidArgument(std::string("not a checkpoint lane-tune can compile: ") + e.what());
    }
    ck = {content_digest(p), p.string(), uint64_t(std::filesystem::file_size(p)), info.architecture, info.name};
  }
  CheckpointInfo info;
  try {
    info = compiler_->inspect(ck.path);
  } catch (const std::exception& e) {
    throw InvalidArgument(std::string("not a checkpoint lane-tune can compile: ") + e.what());
  }
  if (info.vocab < 2) throw InvalidArgument("the checkpoint's vocabulary is empty");

  // The searches are computed before the transaction: the knob space can take a while.
  struct Start {
    std::string gpu;
    std::vector<std::pair<std::string, nlohmann::json>> configs;
  };
  std::vector<Start> starts;
  for (auto& g : spec.gpus) {
    Start s{g, {}};
    try {
      auto space = compiler_->space(ck.path, *find_gpu_kind(g));
      for (auto& k : initial_configs(*space, spec.strategy, spec.budget, spec.seed))
        s.configs.emplace_back(space->key(k), k);
    } catch (const lt::Error& e) {
      throw InvalidArgument("cannot describe the knob space for " + g + ": " + e.what());
    }
    if (s.configs.empty()) throw InvalidArgument("the knob space for " + g + " is empty");
    starts.push_back(std::move(s));
  }

  std::lock_guard lock(m_);
  db::Transaction t(store_.connection());
  store_.put_checkpoint(ck);
  db::Job j;
  j.checkpoint = ck.digest;
  j.gpus = spec.gpus;
  j.strategy = spec.strategy;
  j.budget = spec.budget;
  j.time_budget_s = spec.time_budget_s;
  j.seed = spec.seed;
  j.prompts = make_prompts(info.vocab, spec.seed).dump();
  j.created_at = now();
  int64_t id = store_.insert_job(j);
  uint32_t reps = repetitions(spec.strategy, 0, o_.search);
  for (auto& s : starts)
    for (auto& [key, k] : s.configs) store_.add_plan(id, s.gpu, store_.add_config(id, s.gpu, key, k.dump()), 0, reps);
  t.commit();
  return status_locked(id);
}

JobStatus Coordinator::status_locked(int64_t job) {
  auto j = store_.job(job);
  if (!j) throw NotFound("no job " + std::to_string(job));
  JobStatus s{*j, store_.progress(job), -1};
  if (j->time_budget_s > 0)
    s.time_left_s = j->state == "running" ? std::max(0.0, j->created_at + j->time_budget_s - now()) : 0;
  return s;
}

JobStatus Coordinator::status(int64_t job) {
  std::lock_guard lock(m_);
  return status_locked(job);
}

std::vector<JobStatus> Coordinator::list() {
  std::lock_guard lock(m_);
  std::vector<JobStatus> v;
  for (auto& j : store_.jobs()) v.push_back(status_locked(j.id));
  return v;
}

std::vector<db::Run> Coordinator::results(int64_t job, const std::string& gpu, uint32_t top) {
  if (!gpu.empty() && !find_gpu_kind(gpu)) throw InvalidArgument("unknown GPU kind '" + gpu + "'");
  std::lock_guard lock(m_);
  if (!store_.job(job)) throw NotFound("no job " + std::to_string(job));
  auto runs = store_.runs(job, gpu);
  if (top == 0) return runs;
  std::vector<db::Run> v;
  std::map<std::string, uint32_t> per_gpu;
  for (auto& r : runs)
    if (per_gpu[r.gpu]++ < top) v.push_back(r);
  return v;
}

std::vector<db::Run> Coordinator::best_locked(int64_t job, const std::string& gpu) {
  auto j = store_.job(job);
  if (!j) throw NotFound("no job " + std::to_string(job));
  std::vector<db::Run> v;
  for (auto& g : j->gpus) {
    if (!gpu.empty() && g != gpu) continue;
    std::optional<db::Run> best;
    for (auto& r : store_.runs(job, g))
      if (r.valid && (!best || r.stage > best->stage || (r.stage == best->stage && r.median_ms < best->median_ms)))
        best = r;
    if (best) v.push_back(*best);
  }
  return v;
}

std::vector<db::Run> Coordinator::best(int64_t job, const std::string& gpu) {
  if (!gpu.empty() && !find_gpu_kind(gpu)) throw InvalidArgument("unknown GPU kind '" + gpu + "'");
  std::lock_guard lock(m_);
  return best_locked(job, gpu);
}

JobStatus Coordinator::cancel(int64_t job) {
  std::lock_guard lock(m_);
  db::Transaction t(store_.connection());
  auto j = store_.job(job);
  if (!j) throw NotFound("no job " + std::to_string(job));
  if (j->state == "running") {
    store_.skip_pending(job);
    store_.set_job_state(job, "cancelled", "cancelled; the results so far are kept", now());
  }
  t.commit();
  return status_locked(job);
}

int64_t Coordinator::register_worker(const db::Worker& w) {
  if (!find_gpu_kind(w.gpu)) throw InvalidArgument("unknown GPU kind '" + w.gpu + "'");
  if (w.name.empty()) throw InvalidArgument("a worker needs a name");
  std::lock_guard lock(m_);
  db::Worker x = w;
  x.registered_at = now();
  return store_.register_worker(x);
}

void Coordinator::check_budget_locked(const db::Job& j) {
  if (j.state != "running" || j.time_budget_s <= 0 || now() < j.created_at + j.time_budget_s) return;
  store_.skip_pending(j.id);
  store_.set_job_state(j.id, "done", "time budget reached; the best so far is kept", now());
}

void Coordinator::advance_locked(int64_t job) {
  auto j = store_.job(job);
  if (!j || j->state != "running") return;
  bool complete = true;
  for (auto& g : j->gpus) {
    auto plans = store_.plans(job, g);
    bool open =
        std::any_of(plans.begin(), plans.end(), [](auto& p) { return p.state == "pending" || p.state == "leased"; });
    if (open) {
      complete = false;
      continue;
    }
    if (j->strategy != "halving" || plans.empty()) continue;
    uint32_t last = 0;
    for (auto& p : plans) last = std::max(last, p.stage);
    std::map<int64_t, const db::Run*> by_plan;
    auto runs = store_.runs(job, g);
    for (auto& r : runs) by_plan[r.plan] = &r;
    std::vector<Measured> round;
    size_t planned = 0;
    for (auto& p : plans) {
      if (p.stage != last) continue;
      ++planned;
      auto it = by_plan.find(p.id);
      if (it != by_plan.end()) round.push_back({p.config, it->second->valid, it->second->median_ms});
    }
    uint32_t reps = repetitions("halving", last + 1, o_.search);
    for (int64_t c : promote(round, last, planned, o_.search))
      if (store_.add_plan(job, g, c, last + 1, reps)) complete = false;
  }
  if (complete) store_.set_job_state(job, "done", "complete", now());
}

std::vector<Lease> Coordinator::lease(int64_t worker, uint32_t max) {
  if (max == 0 || max > 64) throw InvalidArgument("a lease asks for 1 to 64 plans");
  std::lock_guard lock(m_);
  auto w = store_.worker(worker);
  if (!w) throw NotFound("no worker " + std::to_string(worker) + " (register again)");
  db::Transaction t(store_.connection());
  double at = now();
  store_.touch_worker(worker, at);
  store_.requeue_expired(at, o_.max_attempts);
  for (auto& j : store_.jobs()) check_budget_locked(j);
  std::vector<Lease> out;
  std::map<int64_t, db::Job> jobs;
  std::map<std::string, db::Checkpoint> checkpoints;
  for (int round = 0; round < 100 && out.size() < max; ++round) {
    auto pending = store_.pending(w->gpu, int(max - out.size()));
    if (pending.empty()) break;
    for (auto& p : pending) {
      if (!jobs.count(p.job)) jobs[p.job] = *store_.job(p.job);
      auto& j = jobs[p.job];
      if (!checkpoints.count(j.checkpoint)) checkpoints[j.checkpoint] = *store_.checkpoint(j.checkpoint);
      if (auto r = store_.reusable(j.checkpoint, j.prompts, p.gpu, p.key, p.repetitions, w->environment_key)) {
        db::Run copy = *r;
        copy.reused_from = r->reused_from ? r->reused_from : r->id;
        copy.plan = p.id;
        copy.job = p.job;
        copy.config = p.config;
        copy.stage = p.stage;
        copy.recorded_at = at;
        store_.insert_run(copy);
        advance_locked(p.job);
        continue;
      }
      Lease l;
      l.plan = p;
      l.plan.lease = store_.next_lease_id();
      l.plan.worker = worker;
      l.plan.deadline = at + o_.lease_s;
      l.plan.state = "leased";
      store_.lease(p.id, l.plan.lease, worker, l.plan.deadline);
      l.checkpoint = j.checkpoint;
      l.checkpoint_size = checkpoints[j.checkpoint].size;
      l.prompts = j.prompts;
      l.warmup = o_.warmup;
      l.stagger_seeds = o_.stagger_seeds;
      l.time_limit_s = o_.time_limit_s;
      out.push_back(std::move(l));
    }
  }
  t.commit();
  return out;
}

std::vector<int64_t> Coordinator::heartbeat(int64_t worker, const std::vector<int64_t>& leases) {
  std::lock_guard lock(m_);
  if (!store_.worker(worker)) throw NotFound("no worker " + std::to_string(worker) + " (register again)");
  db::Transaction t(store_.connection());
  store_.touch_worker(worker, now());
  auto lost = store_.extend(worker, leases, now() + o_.lease_s);
  t.commit();
  return lost;
}

bool Coordinator::report(int64_t worker, int64_t plan, int64_t lease, db::Run r) {
  (void)lease;  // a result is good whichever lease measured it; the first to arrive is kept
  for (double x : {r.median_ms, r.spread_ms, r.min_ms, r.max_ms, r.prefill_ms, r.tok_per_s, r.compile_s})
    if (!finite_nonneg(x)) throw InvalidArgument("a result's timings must be finite and not negative");
  if (!std::isfinite(r.rel_l2) || !std::isfinite(r.argmax_agree))
    throw InvalidArgument("a result's checks must be finite numbers");
  if (r.valid && !r.failure.empty()) throw InvalidArgument("a valid result names no failure");
  if (!r.valid && r.reason.empty()) throw InvalidArgument("an invalid result says why");
  for (auto* json : {&r.profile, &r.environment}) {
    if (json->empty()) *json = "{}";
    if (!nlohmann::json::accept(*json)) throw InvalidArgument("a result's profile and environment are JSON");
  }
  std::lock_guard lock(m_);
  auto w = store_.worker(worker);
  if (!w) throw NotFound("no worker " + std::to_string(worker) + " (register again)");
  auto p = store_.plan(plan);
  if (!p) throw NotFound("no plan " + std::to_string(plan));
  db::Transaction t(store_.connection());
  r.plan = p->id;
  r.job = p->job;
  r.gpu = p->gpu;
  r.config = p->config;
  r.stage = p->stage;
  r.repetitions = p->repetitions;
  r.worker = worker;
  r.worker_name = w->name;
  r.environment_key = w->environment_key;
  r.recorded_at = now();
  r.reused_from = 0;
  bool recorded = store_.insert_run(r);
  if (recorded) advance_locked(p->job);
  store_.touch_worker(worker, now());
  t.commit();
  return recorded;
}

void Coordinator::tick() {
  std::lock_guard lock(m_);
  db::Transaction t(store_.connection());
  store_.requeue_expired(now(), o_.max_attempts);
  for (auto& j : store_.jobs()) {
    check_budget_locked(j);
    advance_locked(j.id);
  }
  t.commit();
}

}  // namespace lt::coord
