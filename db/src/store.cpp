// The tuning database's queries: every one a prepared statement with bound parameters.
#include "db/store.hpp"

#include <sstream>

namespace lt::db {

void migrate(Connection& c);

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}
std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) v.push_back(x);
  return v;
}

constexpr const char* kJobCols =
    "id, checkpoint, gpus, strategy, budget, time_budget_s, seed, state, message, prompts, created_at, finished_at";
Job read_job(Stmt& s) {
  Job j;
  j.id = s.i64(0);
  j.checkpoint = s.text(1);
  j.gpus = split(s.text(2));
  j.strategy = s.text(3);
  j.budget = uint32_t(s.i64(4));
  j.time_budget_s = s.f64(5);
  j.seed = uint64_t(s.i64(6));
  j.state = s.text(7);
  j.message = s.text(8);
  j.prompts = s.text(9);
  j.created_at = s.f64(10);
  j.finished_at = s.f64(11);
  return j;
}

constexpr const char* kPlanCols =
    "p.id, p.job, p.gpu, p.config, c.knobs, c.key, p.stage, p.repetitions, p.state, p.lease, p.worker, p.deadline, "
    "p.attempts FROM plans p JOIN configurations c ON c.id = p.config";
Plan read_plan(Stmt& s) {
  Plan p;
  p.id = s.i64(0);
  p.job = s.i64(1);
  p.gpu = s.text(2);
  p.config = s.i64(3);
  p.knobs = s.text(4);
  p.key = s.text(5);
  p.stage = uint32_t(s.i64(6));
  p.repetitions = uint32_t(s.i64(7));
  p.state = s.text(8);
  p.lease = s.i64(9);
  p.worker = s.i64(10);
  p.deadline = s.f64(11);
  p.attempts = int(s.i64(12));
  return p;
}

constexpr const char* kRunCols =
    "r.id, r.plan, r.job, r.gpu, r.config, c.knobs, r.stage, r.repetitions, r.worker, r.worker_name, r.environment, "
    "r.environment_key, r.median_ms, r.spread_ms, r.min_ms, r.max_ms, r.prefill_ms, r.tok_per_s, r.compile_s, "
    "r.profile, r.logits_hash, r.rel_l2, r.argmax_agree, r.tokens_equal, r.stagger_equal, r.valid, r.reason, "
    "r.failure, r.error, r.recorded_at, r.reused_from FROM runs r JOIN configurations c ON c.id = r.config";
Run read_run(Stmt& s) {
  Run r;
  int i = 0;
  r.id = s.i64(i++);
  r.plan = s.i64(i++);
  r.job = s.i64(i++);
  r.gpu = s.text(i++);
  r.config = s.i64(i++);
  r.knobs = s.text(i++);
  r.stage = uint32_t(s.i64(i++));
  r.repetitions = uint32_t(s.i64(i++));
  r.worker = s.i64(i++);
  r.worker_name = s.text(i++);
  r.environment = s.text(i++);
  r.environment_key = s.text(i++);
  r.median_ms = s.f64(i++);
  r.spread_ms = s.f64(i++);
  r.min_ms = s.f64(i++);
  r.max_ms = s.f64(i++);
  r.prefill_ms = s.f64(i++);
  r.tok_per_s = s.f64(i++);
  r.compile_s = s.f64(i++);
  r.profile = s.text(i++);
  r.logits_hash = s.text(i++);
  r.rel_l2 = s.f64(i++);
  r.argmax_agree = s.f64(i++);
  r.tokens_equal = s.i64(i++) != 0;
  r.stagger_equal = s.i64(i++) != 0;
  r.valid = s.i64(i++) != 0;
  r.reason = s.text(i++);
  r.failure = s.text(i++);
  r.error = s.text(i++);
  r.recorded_at = s.f64(i++);
  r.reused_from = s.i64(i++);
  return r;
}
}  // namespace

Store::Store(const std::filesystem::path& path) : c_(path) {
  migrate(c_);
}

void Store::put_checkpoint(const Checkpoint& c) {
  c_.prepare(
        "INSERT INTO checkpoints (digest, path, size, architecture, name) VALUES (?1, ?2, ?3, ?4, ?5) "
        "ON CONFLICT (digest) DO UPDATE SET path = excluded.path")
      .bind(1, c.digest)
      .bind(2, c.path)
      .bind(3, int64_t(c.size))
      .bind(4, c.architecture)
      .bind(5, c.name)
      .exec();
}

std::optional<Checkpoint> Store::checkpoint(const std::string& digest) {
  auto s = c_.prepare("SELECT digest, path, size, architecture, name FROM checkpoints WHERE digest = ?1");
  s.bind(1, digest);
  if (!s.next()) return std::nullopt;
  Checkpoint c{s.text(0), s.text(1), uint64_t(s.i64(2)), s.text(3), s.text(4)};
  s.exec();
  return c;
}

int64_t Store::insert_job(const Job& j) {
  c_.prepare(
        "INSERT INTO jobs (checkpoint, gpus, strategy, budget, time_budget_s, seed, state, message, prompts, "
        "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
      .bind(1, j.checkpoint)
      .bind(2, join(j.gpus))
      .bind(3, j.strategy)
      .bind(4, j.budget)
      .bind(5, j.time_budget_s)
      .bind(6, int64_t(j.seed))
      .bind(7, j.state)
      .bind(8, j.message)
      .bind(9, j.prompts)
      .bind(10, j.created_at)
      .exec();
  return c_.last_insert_id();
}

std::optional<Job> Store::job(int64_t id) {
  auto s = c_.prepare(std::string("SELECT ") + kJobCols + " FROM jobs WHERE id = ?1");
  s.bind(1, id);
  if (!s.next()) return std::nullopt;
  Job j = read_job(s);
  s.exec();
  return j;
}

std::vector<Job> Store::jobs() {
  auto s = c_.prepare(std::string("SELECT ") + kJobCols + " FROM jobs ORDER BY id");
  std::vector<Job> v;
  while (s.next()) v.push_back(read_job(s));
  return v;
}

void Store::set_job_state(int64_t id, const std::string& state, const std::string& message, double at) {
  c_.prepare("UPDATE jobs SET state = ?2, message = ?3, finished_at = ?4 WHERE id = ?1")
      .bind(1, id)
      .bind(2, state)
      .bind(3, message)
      .bind(4, at)
      .exec();
}

int64_t Store::add_config(int64_t job, const std::string& gpu, const std::string& key, const std::string& knobs) {
  c_.prepare("INSERT OR IGNORE INTO configurations (job, gpu, key, knobs) VALUES (?1, ?2, ?3, ?4)")
      .bind(1, job)
      .bind(2, gpu)
      .bind(3, key)
      .bind(4, knobs)
      .exec();
  auto s = c_.prepare("SELECT id FROM configurations WHERE job = ?1 AND gpu = ?2 AND key = ?3");
  s.bind(1, job).bind(2, gpu).bind(3, key);
  s.next();
  int64_t id = s.i64(0);
  s.exec();
  return id;
}

bool Store::add_plan(int64_t job, const std::string& gpu, int64_t config, uint32_t stage, uint32_t repetitions) {
  return c_.prepare(
               "INSERT OR IGNORE INTO plans (job, gpu, config, stage, repetitions, state) "
               "VALUES (?1, ?2, ?3, ?4, ?5, 'pending')")
             .bind(1, job)
             .bind(2, gpu)
             .bind(3, config)
             .bind(4, stage)
             .bind(5, repetitions)
             .exec() > 0;
}

std::optional<Plan> Store::plan(int64_t id) {
  auto s = c_.prepare(std::string("SELECT ") + kPlanCols + " WHERE p.id = ?1");
  s.bind(1, id);
  if (!s.next()) return std::nullopt;
  Plan p = read_plan(s);
  s.exec();
  return p;
}

std::vector<Plan> Store::plans(int64_t job, const std::string& gpu) {
  auto s = c_.prepare(std::string("SELECT ") + kPlanCols + " WHERE p.job = ?1 AND p.gpu = ?2 ORDER BY p.id");
  s.bind(1, job).bind(2, gpu);
  std::vector<Plan> v;
  while (s.next()) v.push_back(read_plan(s));
  return v;
}

std::vector<Plan> Store::pending(const std::string& gpu, int limit) {
  auto s = c_.prepare(std::string("SELECT ") + kPlanCols +
                      " JOIN jobs j ON j.id = p.job WHERE p.gpu = ?1 AND p.state = 'pending' AND j.state = 'running' "
                      "ORDER BY p.job, p.stage DESC, p.id LIMIT ?2");
  s.bind(1, gpu).bind(2, limit);
  std::vector<Plan> v;
  while (s.next()) v.push_back(read_plan(s));
  return v;
}

void Store::lease(int64_t plan, int64_t lease, int64_t worker, double deadline) {
  c_.prepare("UPDATE plans SET state = 'leased', lease = ?2, worker = ?3, deadline = ?4 WHERE id = ?1")
      .bind(1, plan)
      .bind(2, lease)
      .bind(3, worker)
      .bind(4, deadline)
      .exec();
}

int64_t Store::next_lease_id() {
  auto s = c_.prepare("SELECT COALESCE(MAX(lease), 0) + 1 FROM plans");
  s.next();
  int64_t id = s.i64(0);
  s.exec();
  return id;
}

int Store::requeue_expired(double now, int max_attempts) {
  int n = c_.prepare(
                "UPDATE plans SET state = 'pending', worker = 0, attempts = attempts + 1 "
                "WHERE state = 'leased' AND deadline < ?1 AND attempts + 1 < ?2")
              .bind(1, now)
              .bind(2, max_attempts)
              .exec();
  return n + c_.prepare(
                   "UPDATE plans SET state = 'skipped', attempts = attempts + 1 "
                   "WHERE state = 'leased' AND deadline < ?1")
                 .bind(1, now)
                 .exec();
}

std::vector<int64_t> Store::extend(int64_t worker, const std::vector<int64_t>& leases, double deadline) {
  std::vector<int64_t> lost;
  for (int64_t l : leases) {
    int n = c_.prepare(
                  "UPDATE plans SET deadline = ?3 WHERE lease = ?1 AND worker = ?2 AND state = 'leased' "
                  "AND job IN (SELECT id FROM jobs WHERE state = 'running')")
                .bind(1, l)
                .bind(2, worker)
                .bind(3, deadline)
                .exec();
    if (n == 0) lost.push_back(l);
  }
  return lost;
}

void Store::extend_all(double deadline) {
  c_.prepare("UPDATE plans SET deadline = MAX(deadline, ?1) WHERE state = 'leased'").bind(1, deadline).exec();
}

int Store::skip_pending(int64_t job) {
  return c_.prepare("UPDATE plans SET state = 'skipped' WHERE job = ?1 AND state = 'pending'").bind(1, job).exec();
}

bool Store::insert_run(const Run& r) {
  int n = c_.prepare(
                "INSERT OR IGNORE INTO runs (plan, job, gpu, config, stage, repetitions, worker, worker_name, "
                "environment, environment_key, median_ms, spread_ms, min_ms, max_ms, prefill_ms, tok_per_s, "
                "compile_s, profile, logits_hash, rel_l2, argmax_agree, tokens_equal, stagger_equal, valid, reason, "
                "failure, error, recorded_at, reused_from) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                "?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)")
              .bind(1, r.plan)
              .bind(2, r.job)
              .bind(3, r.gpu)
              .bind(4, r.config)
              .bind(5, r.stage)
              .bind(6, r.repetitions)
              .bind(7, r.worker)
              .bind(8, r.worker_name)
              .bind(9, r.environment)
              .bind(10, r.environment_key)
              .bind(11, r.median_ms)
              .bind(12, r.spread_ms)
              .bind(13, r.min_ms)
              .bind(14, r.max_ms)
              .bind(15, r.prefill_ms)
              .bind(16, r.tok_per_s)
              .bind(17, r.compile_s)
              .bind(18, r.profile)
              .bind(19, r.logits_hash)
              .bind(20, r.rel_l2)
              .bind(21, r.argmax_agree)
              .bind(22, r.tokens_equal)
              .bind(23, r.stagger_equal)
              .bind(24, r.valid)
              .bind(25, r.reason)
              .bind(26, r.failure)
              .bind(27, r.error)
              .bind(28, r.recorded_at)
              .bind(29, r.reused_from)
              .exec();
  if (n == 0) return false;
  c_.prepare("UPDATE plans SET state = 'done' WHERE id = ?1").bind(1, r.plan).exec();
  return true;
}

std::vector<Run> Store::runs(int64_t job, const std::string& gpu) {
  auto s = c_.prepare(std::string("SELECT ") + kRunCols +
                      " WHERE r.job = ?1 AND (?2 = '' OR r.gpu = ?2) "
                      "ORDER BY r.gpu, r.valid DESC, r.stage DESC, r.median_ms, r.id");
  s.bind(1, job).bind(2, gpu);
  std::vector<Run> v;
  while (s.next()) v.push_back(read_run(s));
  return v;
}

std::optional<Run> Store::reusable(const std::string& checkpoint, const std::string& prompts, const std::string& gpu,
                                   const std::string& key, uint32_t repetitions, const std::string& env_key) {
  auto s = c_.prepare(std::string("SELECT ") + kRunCols +
                      " JOIN jobs j ON j.id = r.job WHERE j.checkpoint = ?1 AND r.gpu = ?2 AND c.key = ?3 "
                      "AND r.repetitions = ?4 AND r.environment_key = ?5 AND r.environment_key != '' "
                      "AND r.failure NOT IN ('lost', 'timeout', 'not_recorded') AND j.prompts = ?6 ORDER BY r.id LIMIT 1");
  s.bind(1, checkpoint).bind(2, gpu).bind(3, key).bind(4, repetitions).bind(5, env_key).bind(6, prompts);
  if (!s.next()) return std::nullopt;
  Run r = read_run(s);
  s.exec();
  return r;
}

std::vector<Progress> Store::progress(int64_t job) {
  auto s = c_.prepare("SELECT gpu, planned, done, valid, failed, open FROM job_progress WHERE job = ?1 ORDER BY gpu");
  s.bind(1, job);
  std::vector<Progress> v;
  while (s.next())
    v.push_back({s.text(0), uint32_t(s.i64(1)), uint32_t(s.i64(2)), uint32_t(s.i64(3)), uint32_t(s.i64(4)),
                 uint32_t(s.i64(5))});
  for (auto& p : v) {
    auto b = c_.prepare("SELECT median_ms, knobs FROM best_configs WHERE job = ?1 AND gpu = ?2");
    b.bind(1, job).bind(2, p.gpu);
    if (b.next()) {
      p.best_ms = b.f64(0);
      p.best_knobs = b.text(1);
      b.exec();
    }
  }
  return v;
}

int64_t Store::register_worker(const Worker& w) {
  c_.prepare(
        "INSERT INTO workers (name, gpu, properties, environment, environment_key, registered_at, last_seen) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)")
      .bind(1, w.name)
      .bind(2, w.gpu)
      .bind(3, w.properties)
      .bind(4, w.environment)
      .bind(5, w.environment_key)
      .bind(6, w.registered_at)
      .exec();
  return c_.last_insert_id();
}

std::optional<Worker> Store::worker(int64_t id) {
  auto s = c_.prepare(
      "SELECT id, name, gpu, properties, environment, environment_key, registered_at, last_seen FROM workers "
      "WHERE id = ?1");
  s.bind(1, id);
  if (!s.next()) return std::nullopt;
  Worker w{s.i64(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5), s.f64(6), s.f64(7)};
  s.exec();
  return w;
}

void Store::touch_worker(int64_t id, double now) {
  c_.prepare("UPDATE workers SET last_seen = ?2 WHERE id = ?1").bind(1, id).bind(2, now).exec();
}

}  // namespace lt::db
