// The tuning database's queries: every one a prepared statement with bound parameters.
#include "db/store.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace lt::db {

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
    "id, checkpoint, gpus, strategy, budget, time_budget_s, seed, state, message, prompts, created_at, finished_at, "
    "objective, workload_prompt, workload_gen, context";
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
  j.objective = s.text(12);
  j.workload_prompt = uint32_t(s.i64(13));
  j.workload_gen = uint32_t(s.i64(14));
  j.context = uint32_t(s.i64(15));
  return j;
}

constexpr const char* kPlanCols =
    "p.id, p.job, p.gpu, p.config, c.knobs, c.key, p.stage, p.repetitions, p.state, p.lease, p.worker, p.deadline, "
    "p.attempts, p.verify, p.profile, c.origin FROM plans p JOIN configurations c ON c.id = p.config";
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
  p.verify = s.i64(13) != 0;
  p.profile = s.i64(14) != 0;
  p.origin = s.text(15);
  return p;
}

constexpr const char* kRunCols =
    "r.id, r.plan, r.job, r.gpu, r.config, c.knobs, r.stage, r.repetitions, r.worker, r.worker_name, r.environment, "
    "r.environment_key, r.median_ms, r.spread_ms, r.min_ms, r.max_ms, r.prefill_ms, r.tok_per_s, r.compile_s, "
    "r.profile, r.logits_hash, r.rel_l2, r.argmax_agree, r.tokens_equal, r.stagger_equal, r.valid, r.reason, "
    "r.failure, r.error, r.recorded_at, r.reused_from, r.workload_ms, r.objective_ms, r.verified, r.cost, p.verify, "
    "c.key, c.origin, CASE WHEN r.prefill_ms > 0 THEN j.workload_prompt * 1000.0 / r.prefill_ms ELSE 0 END "
    "FROM runs r JOIN configurations c ON c.id = r.config JOIN plans p ON p.id = r.plan JOIN jobs j ON j.id = r.job";
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
  r.workload_ms = s.f64(i++);
  r.objective_ms = s.f64(i++);
  r.verified = s.i64(i++) != 0;
  r.cost = s.text(i++);
  r.verify = s.i64(i++) != 0;
  r.key = s.text(i++);
  r.origin = s.text(i++);
  r.prefill_tok_s = s.f64(i++);
  return r;
}
}  // namespace

Store::Store(const std::filesystem::path& path) : c_(path) {
  // A damaged file is refused at the start, not discovered by the first write that touches the damage.
  std::string verdict;
  try {
    auto q = c_.prepare("PRAGMA quick_check(5)");
    while (q.next()) verdict += (verdict.empty() ? "" : "; ") + q.text(0);
  } catch (const std::exception& e) {
    verdict = e.what();
  }
  if (verdict != "ok")
    throw std::runtime_error("the database " + path.string() + " is damaged (" + verdict +
                             "): restore it from a backup, or start on a new file");
  migrate(c_, schema_version());
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
        "created_at, objective, workload_prompt, workload_gen, context) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
        "?10, ?11, ?12, ?13, ?14)")
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
      .bind(11, j.objective)
      .bind(12, j.workload_prompt)
      .bind(13, j.workload_gen)
      .bind(14, j.context)
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

size_t Store::running_jobs() {
  auto s = c_.prepare("SELECT COUNT(*) FROM jobs WHERE state = 'running'");
  s.next();
  const size_t n = size_t(s.i64(0));
  s.exec();
  return n;
}

void Store::set_job_state(int64_t id, const std::string& state, const std::string& message, double at) {
  c_.prepare("UPDATE jobs SET state = ?2, message = ?3, finished_at = ?4 WHERE id = ?1")
      .bind(1, id)
      .bind(2, state)
      .bind(3, message)
      .bind(4, at)
      .exec();
}

int64_t Store::add_config(int64_t job, const std::string& gpu, const std::string& key, const std::string& knobs,
                          const std::string& origin) {
  c_.prepare("INSERT OR IGNORE INTO configurations (job, gpu, key, knobs, origin) VALUES (?1, ?2, ?3, ?4, ?5)")
      .bind(1, job)
      .bind(2, gpu)
      .bind(3, key)
      .bind(4, knobs)
      .bind(5, origin)
      .exec();
  auto s = c_.prepare("SELECT id FROM configurations WHERE job = ?1 AND gpu = ?2 AND key = ?3");
  s.bind(1, job).bind(2, gpu).bind(3, key);
  s.next();
  int64_t id = s.i64(0);
  s.exec();
  return id;
}

bool Store::add_plan(int64_t job, const std::string& gpu, int64_t config, uint32_t stage, uint32_t repetitions,
                     bool verify, bool profile) {
  return c_.prepare(
               "INSERT OR IGNORE INTO plans (job, gpu, config, stage, repetitions, state, verify, profile) "
               "VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7)")
             .bind(1, job)
             .bind(2, gpu)
             .bind(3, config)
             .bind(4, stage)
             .bind(5, repetitions)
             .bind(6, verify)
             .bind(7, profile)
             .exec() > 0;
}

namespace {

// The job's pending and leased plans for the GPU kind (every kind's when `gpu` is empty), leased verifications among
// them when `verifications`.
int count_open(Connection& c, int64_t job, const std::string& gpu, bool verifications) {
  auto s = c.prepare(
      "SELECT COUNT(*) FROM plans WHERE job = ?1 AND (?2 = '' OR gpu = ?2) AND (state = 'pending' OR (state = "
      "'leased' AND (?3 OR NOT verify)))");
  s.bind(1, job).bind(2, gpu).bind(3, verifications);
  s.next();
  int n = int(s.i64(0));
  s.exec();
  return n;
}

}  // namespace

int Store::open_plans(int64_t job, const std::string& gpu) {
  return count_open(c_, job, gpu, true);
}

int Store::queued_plans(int64_t job, const std::string& gpu) {
  return count_open(c_, job, gpu, false);
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

int Store::pending_count(const std::string& gpu) {
  auto s = c_.prepare(
      "SELECT COUNT(*) FROM plans p JOIN jobs j ON j.id = p.job WHERE p.gpu = ?1 AND p.state = 'pending' AND "
      "j.state = 'running'");
  s.bind(1, gpu);
  s.next();
  int n = int(s.i64(0));
  s.exec();
  return n;
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
  int n =
      c_.prepare(
            "INSERT OR IGNORE INTO runs (plan, job, gpu, config, stage, repetitions, worker, worker_name, "
            "environment, environment_key, median_ms, spread_ms, min_ms, max_ms, prefill_ms, tok_per_s, "
            "compile_s, profile, logits_hash, rel_l2, argmax_agree, tokens_equal, stagger_equal, valid, reason, "
            "failure, error, recorded_at, reused_from, workload_ms, objective_ms, verified, cost) VALUES (?1, ?2, "
            "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, "
            "?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33)")
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
          .bind(30, r.workload_ms)
          .bind(31, r.objective_ms)
          .bind(32, r.verified)
          .bind(33, r.cost)
          .exec();
  if (n == 0) return false;
  c_.prepare("UPDATE plans SET state = 'done' WHERE id = ?1").bind(1, r.plan).exec();
  return true;
}

std::vector<Run> Store::runs(int64_t job, const std::string& gpu) {
  auto s = c_.prepare(std::string("SELECT ") + kRunCols +
                      " WHERE r.job = ?1 AND (?2 = '' OR r.gpu = ?2) "
                      "ORDER BY r.gpu, r.valid DESC, r.verified DESC, r.objective_ms, r.stage DESC, r.id");
  s.bind(1, job).bind(2, gpu);
  std::vector<Run> v;
  while (s.next()) v.push_back(read_run(s));
  return v;
}

std::vector<Run> Store::runs_since(int64_t job, const std::string& gpu, int64_t after) {
  auto s =
      c_.prepare(std::string("SELECT ") + kRunCols + " WHERE r.job = ?1 AND r.gpu = ?2 AND r.id > ?3 ORDER BY r.id");
  s.bind(1, job).bind(2, gpu).bind(3, after);
  std::vector<Run> v;
  while (s.next()) v.push_back(read_run(s));
  return v;
}

std::optional<Run> Store::reusable(const std::string& checkpoint, const std::string& prompts, const std::string& gpu,
                                   const std::string& key, uint32_t repetitions, const std::string& env_key,
                                   uint32_t workload_prompt, uint32_t workload_gen, bool verify) {
  // From the configurations of that key (CROSS JOIN keeps them the outer loop): a handful, where the runs of the GPU
  // kind are many.
  auto s = c_.prepare(
      "SELECT r.id FROM configurations c CROSS JOIN runs r ON r.config = c.id JOIN jobs j ON j.id = r.job "
      "JOIN plans p ON p.id = r.plan WHERE c.key = ?3 AND j.checkpoint = ?1 AND r.gpu = ?2 "
      "AND r.repetitions = ?4 AND r.environment_key = ?5 AND r.environment_key != '' "
      "AND r.failure NOT IN ('lost', 'timeout', 'not_recorded', 'cancelled', 'bad_plan') AND j.prompts = ?6 "
      "AND j.workload_prompt = ?7 AND j.workload_gen = ?8 AND p.verify >= ?9 ORDER BY r.id LIMIT 1");
  s.bind(1, checkpoint)
      .bind(2, gpu)
      .bind(3, key)
      .bind(4, repetitions)
      .bind(5, env_key)
      .bind(6, prompts)
      .bind(7, workload_prompt)
      .bind(8, workload_gen)
      .bind(9, verify);
  if (!s.next()) return std::nullopt;
  const int64_t id = s.i64(0);
  s.exec();
  return run(id);
}

std::optional<Run> Store::run(int64_t id) {
  auto s = c_.prepare(std::string("SELECT ") + kRunCols + " WHERE r.id = ?1");
  s.bind(1, id);
  if (!s.next()) return std::nullopt;
  Run r = read_run(s);
  s.exec();
  return r;
}

std::optional<Run> Store::best(int64_t job, const std::string& gpu) {
  auto b = c_.prepare("SELECT run FROM best_configs WHERE job = ?1 AND gpu = ?2");
  b.bind(1, job).bind(2, gpu);
  if (!b.next()) return std::nullopt;
  int64_t id = b.i64(0);
  b.exec();
  return run(id);
}

double Store::best_objective_ms(int64_t job, const std::string& gpu) {
  auto s = c_.prepare(
      "SELECT MIN(objective_ms) FROM runs WHERE job = ?1 AND gpu = ?2 AND valid = 1 AND objective_ms > 0");
  s.bind(1, job).bind(2, gpu);
  double best = 0;
  if (s.next() && !s.is_null(0)) best = s.f64(0);
  return best;
}

std::vector<Progress> Store::progress(int64_t job) {
  auto s = c_.prepare(
      "SELECT gpu, planned, done, valid, failed, open, measured, verified, strategy, note FROM job_progress "
      "WHERE job = ?1 ORDER BY gpu");
  s.bind(1, job);
  std::vector<Progress> v;
  while (s.next()) {
    Progress p;
    p.gpu = s.text(0);
    p.planned = uint32_t(s.i64(1));
    p.done = uint32_t(s.i64(2));
    p.valid = uint32_t(s.i64(3));
    p.failed = uint32_t(s.i64(4));
    p.open = uint32_t(s.i64(5));
    p.measured = uint32_t(s.i64(6));
    p.verified = uint32_t(s.i64(7));
    p.strategy = s.text(8);
    p.note = s.text(9);
    v.push_back(p);
  }
  for (auto& p : v) {
    auto b = c_.prepare(
        "SELECT median_ms, knobs, objective_ms, prefill_tok_s, workload_ms FROM best_configs WHERE job = ?1 AND "
        "gpu = ?2");
    b.bind(1, job).bind(2, p.gpu);
    if (b.next()) {
      p.best_ms = b.f64(0);
      p.best_knobs = b.text(1);
      p.best_objective_ms = b.f64(2);
      p.best_prefill_tok_s = b.f64(3);
      p.best_workload_ms = b.f64(4);
      b.exec();
    }
    auto m = c_.prepare(
        "SELECT COUNT(DISTINCT worker), TOTAL(COALESCE(json_extract(cost, '$.run_s'), 0) + "
        "COALESCE(json_extract(cost, '$.load_s'), 0)), MIN(recorded_at - COALESCE(json_extract(cost, '$.measure_s'), "
        "0)), MAX(recorded_at) FROM runs WHERE job = ?1 AND gpu = ?2 AND reused_from = 0 AND json_valid(cost)");
    m.bind(1, job).bind(2, p.gpu);
    if (m.next()) {
      const double workers = double(m.i64(0)), span = m.f64(3) - m.f64(2);
      if (workers > 0 && span > 0) p.measuring = std::clamp(m.f64(1) / (span * workers), 0.0, 1.0);
      m.exec();
    }
  }
  return v;
}

namespace {
constexpr const char* kSearchCols = "job, gpu, strategy, state, planned, note, done, updated_at FROM searches";
Search read_search(Stmt& s) {
  return {s.i64(0), s.text(1), s.text(2), s.text(3), uint64_t(s.i64(4)), s.text(5), s.i64(6) != 0, s.f64(7)};
}
}  // namespace

void Store::insert_search(const Search& x) {
  c_.prepare(
        "INSERT INTO searches (job, gpu, strategy, state, planned, note, done, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, "
        "?6, ?7, ?8)")
      .bind(1, x.job)
      .bind(2, x.gpu)
      .bind(3, x.strategy)
      .bind(4, x.state)
      .bind(5, int64_t(x.planned))
      .bind(6, x.note)
      .bind(7, x.done)
      .bind(8, x.updated_at)
      .exec();
}

std::vector<Search> Store::searches(int64_t job) {
  auto s = c_.prepare(std::string("SELECT ") + kSearchCols + " WHERE job = ?1 ORDER BY gpu");
  s.bind(1, job);
  std::vector<Search> v;
  while (s.next()) v.push_back(read_search(s));
  return v;
}

std::vector<Search> Store::active_searches() {
  auto s = c_.prepare(std::string("SELECT ") + kSearchCols +
                      " WHERE done = 0 AND job IN (SELECT id FROM jobs WHERE state = 'running') ORDER BY job, gpu");
  std::vector<Search> v;
  while (s.next()) v.push_back(read_search(s));
  return v;
}

void Store::update_search(const Search& x) {
  c_.prepare(
        "UPDATE searches SET state = ?3, planned = ?4, note = ?5, done = ?6, updated_at = ?7 WHERE job = ?1 AND "
        "gpu = ?2")
      .bind(1, x.job)
      .bind(2, x.gpu)
      .bind(3, x.state)
      .bind(4, int64_t(x.planned))
      .bind(5, x.note)
      .bind(6, x.done)
      .bind(7, x.updated_at)
      .exec();
}

bool Store::searches_done(int64_t job) {
  auto s = c_.prepare("SELECT COUNT(*) FROM searches WHERE job = ?1 AND done = 0");
  s.bind(1, job);
  s.next();
  bool done = s.i64(0) == 0;
  s.exec();
  return done;
}

std::vector<WarmCandidate> Store::warm_candidates(const std::string& gpu, const std::string& architecture, int64_t job,
                                                  int per_job, int limit) {
  auto s = c_.prepare(
      "SELECT job, knobs, objective_ms, same FROM ("
      " SELECT d.job, d.knobs, d.objective_ms, k.architecture = ?2 AS same,"
      "  ROW_NUMBER() OVER (PARTITION BY d.job, d.config ORDER BY d.objective_ms) AS per_config"
      " FROM run_details d JOIN checkpoints k ON k.digest = d.checkpoint"
      " WHERE d.gpu = ?1 AND d.valid = 1 AND d.verified = 1 AND d.job != ?3 AND d.objective_ms > 0)"
      " WHERE per_config = 1 ORDER BY same DESC, job DESC, objective_ms");
  s.bind(1, gpu).bind(2, architecture).bind(3, job);
  std::vector<WarmCandidate> v;
  std::map<int64_t, int> taken;
  while (s.next()) {
    WarmCandidate w{s.i64(0), s.text(1), s.f64(2), s.i64(3) != 0};
    if (taken[w.job]++ >= per_job) continue;
    v.push_back(w);
    if (int(v.size()) >= limit) {
      s.exec();
      break;
    }
  }
  return v;
}

int64_t Store::register_worker(const Worker& w) {
  c_.prepare(
        "INSERT INTO workers (name, gpu, properties, environment, environment_key, registered_at, last_seen, "
        "key_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)")
      .bind(1, w.name)
      .bind(2, w.gpu)
      .bind(3, w.properties)
      .bind(4, w.environment)
      .bind(5, w.environment_key)
      .bind(6, w.registered_at)
      .bind(7, w.key_hash)
      .exec();
  return c_.last_insert_id();
}

namespace {
constexpr const char* kWorkerColumns =
    "SELECT id, name, gpu, properties, environment, environment_key, registered_at, last_seen, key_hash FROM workers";
Worker read_worker(Stmt& s) {
  return {s.i64(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5), s.f64(6), s.f64(7), s.text(8)};
}
}  // namespace

std::optional<Worker> Store::worker(int64_t id) {
  auto s = c_.prepare(std::string(kWorkerColumns) + " WHERE id = ?1");
  s.bind(1, id);
  if (!s.next()) return std::nullopt;
  Worker w = read_worker(s);
  s.exec();
  return w;
}

std::vector<Worker> Store::workers() {
  auto s = c_.prepare(std::string(kWorkerColumns) + " ORDER BY id");
  std::vector<Worker> v;
  while (s.next()) v.push_back(read_worker(s));
  return v;
}

std::map<int64_t, uint32_t> Store::leases_held() {
  auto s = c_.prepare("SELECT worker, COUNT(*) FROM plans WHERE state = 'leased' GROUP BY worker");
  std::map<int64_t, uint32_t> m;
  while (s.next()) m[s.i64(0)] = uint32_t(s.i64(1));
  return m;
}

void Store::touch_worker(int64_t id, double now) {
  c_.prepare("UPDATE workers SET last_seen = ?2 WHERE id = ?1").bind(1, id).bind(2, now).exec();
}

}  // namespace lt::db
