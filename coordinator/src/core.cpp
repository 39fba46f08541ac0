// The coordinator's core: submitting jobs, leasing plans, recording results, ending jobs. The searches that make the
// plans are replenished in searches.cpp.
#include "coordinator/core.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "coordinator/log.hpp"

namespace lt::coord {
namespace {

double system_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hex(const unsigned char* b, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kDigits[b[i] >> 4];
    s[2 * i + 1] = kDigits[b[i] & 15];
  }
  return s;
}

// A worker's key: 128 bits from OpenSSL's generator, in hex.
std::string random_key() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) throw lt::Error("no random bytes for a worker's key (OpenSSL's RAND_bytes)");
  return hex(b, sizeof b);
}

// SHA-256 of `s`, in hex: what the database keeps of a key.
std::string sha256_hex(std::string_view s) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(s.data(), s.size(), d, &n, EVP_sha256(), nullptr) != 1) throw lt::Error("SHA-256 failed (OpenSSL)");
  return hex(d, n);
}

}  // namespace

nlohmann::json check_prompts(uint32_t vocab, uint64_t seed) {
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

std::vector<CheckPrompt> read_check_prompts(const std::string& json) {
  const auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_array() || j.empty()) throw lt::Error("the check prompts are not a list of prompts");
  std::vector<CheckPrompt> v;
  for (const auto& q : j) {
    if (!q.is_object() || !q.contains("n_gen") || !q["n_gen"].is_number_unsigned() || !q.contains("tokens") ||
        !q["tokens"].is_array() || q["tokens"].empty())
      throw lt::Error("a check prompt is not {\"n_gen\": N, \"tokens\": [...]}");
    CheckPrompt p;
    if (q["n_gen"].get<uint64_t>() > UINT32_MAX) throw lt::Error("a check prompt generates too many tokens");
    p.n_gen = q["n_gen"].get<uint32_t>();
    for (const auto& t : q["tokens"]) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
        throw lt::Error("a check prompt's token is not a token id");
      p.tokens.push_back(t.get<int32_t>());
    }
    v.push_back(std::move(p));
  }
  return v;
}

namespace {

// A running job as lease() hands out its plans: its row and what the row says, read once a call.
struct LeasedJob {
  db::Job row;
  Objective objective = Objective::Workload;
  std::vector<CheckPrompt> prompts;
  db::Checkpoint checkpoint;
};

// Reads job `id`'s row and what its plans need; throws lt::Error saying which part of the stored row cannot be read.
LeasedJob read_leased_job(db::Store& store, int64_t id) {
  LeasedJob j;
  auto row = store.job(id);
  if (!row) throw lt::Error("job " + std::to_string(id) + " has no row");
  j.row = *row;
  try {
    j.objective = parse_objective(j.row.objective);
  } catch (const lt::Error& e) {
    throw lt::Error(std::string("its objective: ") + e.what());
  }
  try {
    j.prompts = read_check_prompts(j.row.prompts);
  } catch (const lt::Error& e) {
    throw lt::Error(std::string("its prompts: ") + e.what());
  }
  if (!is_digest(j.row.checkpoint))
    throw lt::Error("its checkpoint digest is not 32 hex digits: \"" + j.row.checkpoint.substr(0, 64) + "\"");
  auto ck = store.checkpoint(j.row.checkpoint);
  if (!ck) throw lt::Error("its checkpoint " + j.row.checkpoint + " is not stored");
  j.checkpoint = *ck;
  return j;
}

// Why the plan's stored configuration cannot be handed out (its knobs are not a JSON object); nullopt when it can.
std::optional<std::string> malformed_plan(const db::Plan& p) {
  const auto k = nlohmann::json::parse(p.knobs, nullptr, false);
  if (k.is_discarded()) return "its stored knobs are not JSON: \"" + p.knobs.substr(0, 64) + "\"";
  if (!k.is_object()) return "its stored knobs are not a JSON object: " + k.dump().substr(0, 64);
  return std::nullopt;
}

// Job `job` as read_leased_job reads it; a job whose row cannot be read is failed in the caller's transaction (its
// pending plans skipped, the reason in its message) and nullopt returned.
std::optional<LeasedJob> read_or_fail_job(db::Store& store, int64_t job, double at) {
  try {
    return read_leased_job(store, job);
  } catch (const lt::Error& e) {
    const std::string why =
        std::string("the job's stored row cannot be read (") + e.what() + "): it was stopped; submit it again";
    log(0, "malformed_job", {{"job", std::to_string(job)}, {"error", e.what()}});
    store.skip_pending(job);
    store.set_job_state(job, "failed", why, at);
    return std::nullopt;
  }
}

bool finite_nonneg(double x) {
  return std::isfinite(x) && x >= 0;
}

Workload workload_of(const db::Job& j) {
  return {j.workload_prompt, j.workload_gen};
}

}  // namespace

Coordinator::Coordinator(const std::filesystem::path& db_path, Options o, std::unique_ptr<Compiler> compiler,
                         Clock clock)
    : store_(db_path), o_(std::move(o)), compiler_(std::move(compiler)), clock_(clock ? clock : system_now) {
  if (o_.data_dir.empty()) o_.data_dir = db_path.parent_path() / "lane-tune-data";
  std::filesystem::create_directories(upload_dir());
  // Uploads cut off by a crash: nothing can finish them now.
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(upload_dir(), ec))
    if (e.path().extension() == ".part" && e.path().filename().string().rfind("upload-", 0) == 0) {
      log(0, "stale_upload_removed", {{"path", e.path().string()}});
      std::filesystem::remove(e.path(), ec);
    }
  store_.extend_all(now() + o_.lease_s);
}

std::filesystem::path Coordinator::upload_dir() const {
  return o_.data_dir / "checkpoints";
}

std::string Coordinator::hold_file(Upload& u) {
  std::lock_guard lock(m_);
  std::string d = u.finish();
  ++held_[d];
  return d;
}

void Coordinator::release_file(const std::string& digest) {
  std::lock_guard lock(m_);
  if (--held_[digest] > 0) return;
  held_.erase(digest);
  std::error_code ec;
  if (!store_.checkpoint(digest)) std::filesystem::remove(upload_dir() / (digest + ".gguf"), ec);
}

std::string Coordinator::add_checkpoint(Upload& u) {
  struct Release {
    Coordinator& core;
    std::string digest;
    ~Release() { core.release_file(digest); }
  } held{*this, hold_file(u)};
  const std::string& d = held.digest;
  auto path = upload_dir() / (d + ".gguf");
  CheckpointInfo info;
  try {
    info = compiler_->inspect(path);
  } catch (const std::exception& e) {
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

void Coordinator::check_running_jobs_locked() {
  if (o_.max_running_jobs == 0) return;
  const size_t running = store_.running_jobs();
  if (running >= o_.max_running_jobs)
    throw ResourceExhausted("the coordinator runs " + std::to_string(running) + " jobs, its most at once (--max-jobs " +
                            std::to_string(o_.max_running_jobs) + "): wait for one to end, or cancel one");
}

JobStatus Coordinator::submit(const JobSpec& spec) {
  // What the job asks for, checked before anything is read.
  Objective objective;
  try {
    objective = parse_objective(spec.objective);
  } catch (const lt::Error& e) {
    throw InvalidArgument(e.what());
  }
  if (!known_strategy(spec.strategy))
    throw InvalidArgument("unknown strategy '" + spec.strategy + "' (model, grid, random, halving)");
  if (spec.workload && (spec.workload->prompt == 0 || spec.workload->gen == 0))
    throw InvalidArgument("a workload has at least 1 prompt token and 1 generated token (--workload prompt=N,gen=M)");
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
  if (!std::isfinite(spec.time_budget_s) || spec.time_budget_s < 0)
    throw InvalidArgument("the time budget must be a positive number of seconds");
  if (spec.digest.empty() == spec.path.empty())
    throw InvalidArgument("a job names its checkpoint by digest or by path, exactly one");
  {
    std::lock_guard lock(m_);
    check_running_jobs_locked();  // before the space is described; again when the job is stored
  }

  db::Checkpoint ck;
  // A copy of a file named by path, held while this submit runs (removed at its end unless a stored checkpoint holds
  // it then: the submit was refused).
  struct Release {
    Coordinator& core;
    std::string digest;
    ~Release() {
      if (!digest.empty()) core.release_file(digest);
    }
  } copy{*this, {}};
  if (!spec.digest.empty()) {
    if (!is_digest(spec.digest))
      throw InvalidArgument("'" + spec.digest + "' is not a checkpoint digest (32 hex digits)");
    std::lock_guard lock(m_);
    auto c = store_.checkpoint(spec.digest);
    if (!c) throw NotFound("no checkpoint with digest " + spec.digest + " (upload it first)");
    ck = *c;
  } else {
    if (o_.path_roots.empty())
      throw FailedPrecondition(
          "this coordinator takes checkpoints by upload only (submit without --path), unless it is started with "
          "--allow-path DIR for the files under DIR");
    if (!std::filesystem::path(spec.path).is_absolute())
      throw InvalidArgument("a checkpoint path must be absolute: " + spec.path);
    // Inside an allowed folder once links and `..` are resolved (whether the file exists is said only then).
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::weakly_canonical(spec.path, ec);
    bool inside = false;
    std::string roots;
    for (const auto& root : o_.path_roots) {
      const auto r = std::filesystem::weakly_canonical(root, ec);
      const auto rel = p.lexically_relative(r);
      inside |= !ec && !rel.empty() && *rel.begin() != ".." && *rel.begin() != ".";
      roots += (roots.empty() ? "" : ", ") + r.string();
    }
    if (!inside) throw PermissionDenied("the coordinator reads checkpoints by path only under " + roots);
    if (!std::filesystem::is_regular_file(p)) throw InvalidArgument("the coordinator cannot read " + spec.path);
    // Read once, through one descriptor, into the coordinator's store as an upload is: from then on the checkpoint is
    // that copy (described, fetched and leased from there, its digest that of the bytes read), whatever becomes of
    // the file under the allowed folder.
    Upload u(upload_dir(), o_.max_upload_bytes);
    read_into(u, p);
    copy.digest = hold_file(u);
    ck = {copy.digest, (upload_dir() / (copy.digest + ".gguf")).string(), u.size(), "", ""};
  }
  CheckpointInfo info;
  try {
    info = compiler_->inspect(ck.path);
  } catch (const std::exception& e) {
    throw InvalidArgument(std::string("not a checkpoint lane-tune can compile: ") + e.what());
  }
  ck.architecture = info.architecture;
  ck.name = info.name;
  if (info.vocab < 2) throw InvalidArgument("the checkpoint's vocabulary is empty");
  if (spec.context > 0) {
    if (info.trained_context > 0 && spec.context > info.trained_context)
      throw InvalidArgument("context " + std::to_string(spec.context) + " is past the model's trained context of " +
                            std::to_string(info.trained_context) + " positions");
    info.context = spec.context;
  }
  if (info.context < 2) throw InvalidArgument("the checkpoint's context is too short to run a workload");
  FittedWorkload fitted;
  try {
    fitted = fit_workload(spec.workload, info.context);
  } catch (const lt::Error& e) {
    throw InvalidArgument(e.what());
  }

  // Each GPU kind's search and its first batch, made outside the lock (a knob space takes a moment to describe).
  std::map<std::string, std::vector<Seed>> warm;
  size_t first = o_.search.queue;
  if (spec.strategy == "model" && o_.warm_start) {
    std::lock_guard lock(m_);
    for (auto& g : spec.gpus) warm[g] = warm_seeds_locked(g, info.architecture);
  }
  std::vector<NewSearch> searches;
  for (auto& g : spec.gpus) {
    NewSearch s;
    s.gpu = g;
    try {
      s.space = compiler_->space(ck.path, *find_gpu_kind(g), spec.context);
      if (s.space->size() == 0) throw InvalidArgument("the knob space for " + g + " is empty");
      SearchSettings settings;
      settings.strategy = spec.strategy;
      settings.budget = spec.budget;
      if (spec.strategy == "model" && spec.budget == 0 && spec.time_budget_s > 0)
        settings.budget = o_.search.model_budget_timed;
      settings.seed = spec.seed;
      settings.objective = objective;
      settings.options = o_.search;
      settings.warm = warm[g];
      s.strategy = make_strategy(*s.space, settings);
      s.first = s.strategy->propose(first, 0);
      s.note = s.strategy->note();
    } catch (const InvalidArgument&) {
      throw;
    } catch (const lt::Error& e) {
      throw InvalidArgument("cannot describe the knob space for " + g + ": " + e.what());
    }
    if (s.first.empty()) throw InvalidArgument("the knob space for " + g + " is empty");
    searches.push_back(std::move(s));
  }

  std::lock_guard lock(m_);
  check_running_jobs_locked();
  db::Transaction t(store_.connection());
  store_.put_checkpoint(ck);
  db::Job j;
  j.checkpoint = ck.digest;
  j.gpus = spec.gpus;
  j.strategy = spec.strategy;
  j.budget = spec.budget;
  j.time_budget_s = spec.time_budget_s;
  j.seed = spec.seed;
  j.prompts = check_prompts(info.vocab, spec.seed).dump();
  j.created_at = now();
  j.objective = to_string(objective);
  j.workload_prompt = fitted.workload.prompt;
  j.workload_gen = fitted.workload.gen;
  j.context = spec.context;
  j.message = fitted.note;
  int64_t id = store_.insert_job(j);
  for (auto& s : searches) store_search(store_, id, s, now());
  t.commit();
  return status_locked(id);
}

void Coordinator::store_search(db::Store& store, int64_t job, NewSearch& s, double now) {
  db::Search row;
  row.job = job;
  row.gpu = s.gpu;
  row.strategy = s.strategy->name();
  row.state = s.strategy->save().dump();
  row.planned = s.strategy->planned();
  row.note = s.note;
  row.done = s.strategy->done();
  row.updated_at = now;
  store.insert_search(row);
  for (auto& c : s.first) {
    int64_t config = store.add_config(job, s.gpu, c.key, c.knobs.dump(), c.origin);
    store.add_plan(job, s.gpu, config, c.stage, c.repetitions, c.verify, c.profile);
  }
}

JobStatus Coordinator::status_locked(int64_t job) {
  auto j = store_.job(job);
  if (!j) throw NotFound("no job " + std::to_string(job));
  JobStatus s{*j, store_.progress(job), -1, ""};
  if (auto c = store_.checkpoint(j->checkpoint)) s.checkpoint_name = c->name;
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
    if (auto b = store_.best(job, g)) v.push_back(*b);
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

int64_t Coordinator::register_worker(const db::Worker& w, std::string* key) {
  if (!find_gpu_kind(w.gpu)) throw InvalidArgument("unknown GPU kind '" + w.gpu + "'");
  if (w.name.empty()) throw InvalidArgument("a worker needs a name");
  db::Worker x = w;
  if (key) {
    *key = random_key();
    x.key_hash = sha256_hex(*key);
  }
  std::lock_guard lock(m_);
  x.registered_at = now();
  return store_.register_worker(x);
}

void Coordinator::check_worker_key(int64_t worker, std::string_view key) {
  std::optional<db::Worker> w;
  {
    std::lock_guard lock(m_);
    w = store_.worker(worker);
  }
  if (!w) throw NotFound("no worker " + std::to_string(worker) + " (register again)");
  if (w->key_hash.empty())  // (registered before keys: a worker knows this answer and registers again)
    throw NotFound("no worker " + std::to_string(worker) + " with a key (registered before keys): register again");
  const std::string h = sha256_hex(key);
  if (h.size() != w->key_hash.size() || CRYPTO_memcmp(h.data(), w->key_hash.data(), h.size()) != 0)
    throw PermissionDenied("the call's key is not worker " + std::to_string(worker) + "'s");
}

void Coordinator::check_budget_locked(const db::Job& j) {
  if (j.state != "running" || j.time_budget_s <= 0 || now() < j.created_at + j.time_budget_s) return;
  store_.skip_pending(j.id);
  store_.set_job_state(j.id, "done", "time budget reached; the best so far is kept", now());
}

void Coordinator::check_complete_locked(int64_t job) {
  auto j = store_.job(job);
  if (!j || j->state != "running") return;
  if (store_.searches_done(job) && store_.open_plans(job) == 0) store_.set_job_state(job, "done", "complete", now());
}

size_t Coordinator::target_locked(const std::string& gpu) {
  size_t asked = 0;
  for (auto& [w, l] : leasing_)
    if (l.gpu == gpu && l.at >= now() - 3 * o_.lease_s) asked += l.max;
  return std::max<size_t>(o_.search.queue, 2 * asked);
}

void Coordinator::wanted() {
  if (wake_) wake_();
}

bool Coordinator::closing(const db::Job& j, double at) const {
  if (j.time_budget_s <= 0) return false;
  const double left = j.created_at + j.time_budget_s - at;
  return left < std::max(o_.closing_min_s, o_.closing_share * j.time_budget_s);
}

void Coordinator::fail_plan_locked(const db::Plan& p, const std::string& why, double at) {
  log(0, "malformed_plan", {{"plan", std::to_string(p.id)}, {"job", std::to_string(p.job)}, {"error", why}});
  db::Run r;
  r.plan = p.id;
  r.job = p.job;
  r.gpu = p.gpu;
  r.config = p.config;
  r.stage = p.stage;
  r.repetitions = p.repetitions;
  r.worker_name = "coordinator";
  r.valid = false;
  r.failure = kBadPlan;
  r.reason = "the plan cannot be measured: " + why;
  r.recorded_at = at;
  store_.insert_run(r);
  check_complete_locked(p.job);
}

std::vector<Lease> Coordinator::lease(int64_t worker, uint32_t max, bool verifications_only) {
  if (max == 0 || max > 64) throw InvalidArgument("a lease asks for 1 to 64 plans");
  const auto started = std::chrono::steady_clock::now();
  if (o_.replenish_inline) replenish();
  std::vector<Lease> out;
  bool low = false;  // the GPU kind's queue is under half its target: the replenisher is wanted
  {
    std::lock_guard lock(m_);
    auto w = store_.worker(worker);
    if (!w) throw NotFound("no worker " + std::to_string(worker) + " (register again)");
    db::Transaction t(store_.connection());
    double at = now();
    store_.touch_worker(worker, at);
    // What the worker asks for at most (a worker asks for what its queue lacks), while it keeps leasing.
    auto& seen = leasing_[worker];
    seen = {w->gpu, seen.at >= at - 3 * o_.lease_s ? std::max(seen.max, max) : max, at};
    store_.requeue_expired(at, o_.max_attempts);
    for (auto& j : store_.jobs()) check_budget_locked(j);
    // Each job's row read once: nullopt for a job whose row cannot be read (failed here, its plans stopped).
    std::map<int64_t, std::optional<LeasedJob>> jobs;
    // Screens of jobs in their closing phase (or all, for a verifications-only lease), left pending.
    std::set<int64_t> held_back;
    std::map<std::pair<int64_t, std::string>, double> best;  // (job, GPU kind) -> best objective so far
    for (int round = 0; round < 100 && out.size() < max; ++round) {
      auto pending = store_.pending(w->gpu, int(max - out.size() + held_back.size()));
      std::erase_if(pending, [&](const db::Plan& p) { return held_back.count(p.id) > 0; });
      if (pending.empty()) break;
      for (auto& p : pending) {
        // A stored row that cannot be read fails its job or its plan, here and before any lease is taken: the other
        // plans go on being leased, and nothing is handed to a worker that the reply could not carry.
        auto found = jobs.find(p.job);
        if (found == jobs.end()) found = jobs.emplace(p.job, read_or_fail_job(store_, p.job, at)).first;
        if (!found->second) continue;
        const LeasedJob& j = *found->second;
        if (auto why = malformed_plan(p)) {
          fail_plan_locked(p, *why, at);
          continue;
        }
        // The closing phase of a job with a time budget: its last stretch goes to verifying the front, so that the
        // budget never ends with the fastest screened configuration unverified (a screen leased now would end too
        // late to be verified after it).
        if (!p.verify && (verifications_only || closing(j.row, at))) {
          held_back.insert(p.id);
          continue;
        }
        if (auto r = store_.reusable(j.row.checkpoint, j.row.prompts, p.gpu, p.key, p.repetitions, w->environment_key,
                                     j.row.workload_prompt, j.row.workload_gen, p.verify)) {
          db::Run copy = *r;
          copy.reused_from = r->reused_from ? r->reused_from : r->id;
          copy.plan = p.id;
          copy.job = p.job;
          copy.config = p.config;
          copy.stage = p.stage;
          copy.recorded_at = at;
          copy.objective_ms = objective_ms(j.objective, workload_of(j.row), copy);
          store_.insert_run(copy);
          check_complete_locked(p.job);
          continue;
        }
        Lease l;
        l.plan = p;
        l.plan.lease = store_.next_lease_id();
        l.plan.worker = worker;
        l.plan.deadline = at + o_.lease_s;
        l.plan.state = "leased";
        store_.lease(p.id, l.plan.lease, worker, l.plan.deadline);
        l.checkpoint = j.row.checkpoint;
        l.checkpoint_size = j.checkpoint.size;
        l.checkpoint_path = j.checkpoint.path;
        l.prompts = j.prompts;
        l.warmup = o_.warmup;
        l.stagger_seeds = o_.stagger_seeds;
        l.time_limit_s = o_.time_limit_s;
        l.workload = workload_of(j.row);
        if (!p.verify && o_.cutoff_factor > 1 && l.workload.gen > 0) {
          if (!best.count({p.job, p.gpu})) best[{p.job, p.gpu}] = store_.best_objective_ms(p.job, p.gpu);
          l.cutoff_on = j.row.objective;
          l.cutoff_factor = o_.cutoff_factor;
          l.best_ms = best[{p.job, p.gpu}];
        }
        out.push_back(std::move(l));
      }
    }
    low = size_t(store_.pending_count(w->gpu)) * 2 < target_locked(w->gpu);
    t.commit();
  }
  if (low && !o_.replenish_inline) wanted();
  observe_lease(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
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
  for (double x : {r.median_ms, r.spread_ms, r.min_ms, r.max_ms, r.prefill_ms, r.tok_per_s, r.compile_s, r.workload_ms})
    if (!finite_nonneg(x)) throw InvalidArgument("a result's timings must be finite and not negative");
  if (!std::isfinite(r.rel_l2) || !std::isfinite(r.argmax_agree))
    throw InvalidArgument("a result's checks must be finite numbers");
  if (r.valid && !r.failure.empty()) throw InvalidArgument("a valid result names no failure");
  if (!r.valid && r.reason.empty()) throw InvalidArgument("an invalid result says why");
  for (auto* json : {&r.profile, &r.environment, &r.cost}) {
    if (json->empty()) *json = "{}";
    if (!nlohmann::json::accept(*json)) throw InvalidArgument("a result's profile, environment and cost are JSON");
  }
  bool recorded = false, low = false;
  {
    std::lock_guard lock(m_);
    auto w = store_.worker(worker);
    if (!w) throw NotFound("no worker " + std::to_string(worker) + " (register again)");
    auto p = store_.plan(plan);
    if (!p) throw NotFound("no plan " + std::to_string(plan));
    // Only the worker holding the plan's live lease reports it (a result arriving again after it was recorded is a
    // duplicate: ignored, whoever sends it).
    if (p->state == "done") return false;
    if (p->state != "leased")
      throw FailedPrecondition("plan " + std::to_string(plan) + " is " + p->state +
                               " (its lease expired, its job ended, or it was never leased): its result is not taken");
    if (p->worker != worker || p->lease != lease)
      throw PermissionDenied("plan " + std::to_string(plan) + " is not leased to worker " + std::to_string(worker) +
                             " under lease " + std::to_string(lease));
    if (w->gpu != p->gpu)
      throw PermissionDenied("worker " + std::to_string(worker) + " measures " + w->gpu + ", not " + p->gpu);
    auto j = store_.job(p->job);
    if (j->state != "running")
      throw FailedPrecondition("job " + std::to_string(p->job) + " is " + j->state + ": plan " + std::to_string(plan) +
                               "'s result is not taken");
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
    // Verified only where the plan asked for the full checks and they passed.
    r.verified = p->verify && r.valid && r.verified;
    const Workload wl = workload_of(*j);
    if (r.valid && r.workload_ms == 0 && wl.gen > 0) r.workload_ms = workload_ms(r, wl);
    r.objective_ms = r.valid ? objective_ms(parse_objective(j->objective), wl, r) : 0;
    recorded = store_.insert_run(r);
    if (recorded) check_complete_locked(p->job);
    store_.touch_worker(worker, now());
    // The search's queue under half its target (a round ending, a model batch to take), or a valid screen (which may
    // take the search's front, whose verification is wanted now: Strategy::urgent): the replenisher is wanted.
    low = recorded &&
          ((r.valid && !p->verify) || size_t(store_.queued_plans(p->job, p->gpu)) * 2 < target_locked(p->gpu));
    t.commit();
  }
  if (recorded) observe_measurement(r.gpu, r.recorded_at);
  if (o_.replenish_inline)
    replenish();
  else if (low)
    wanted();
  return recorded;
}

void Coordinator::tick() {
  {
    std::lock_guard lock(m_);
    db::Transaction t(store_.connection());
    store_.requeue_expired(now(), o_.max_attempts);
    for (auto& j : store_.jobs()) {
      check_budget_locked(j);
      check_complete_locked(j.id);
    }
    t.commit();
  }
  wanted();
}

}  // namespace lt::coord
