// The releases' core: freezing a job's winner, starting nights that re-measure releases, and judging them.
#include "coordinator/releases.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace lt::coord {
namespace {

constexpr const char* kReleaseCols =
    "id, job, gpu, run, checkpoint, knobs, prompts, median_ms, spread_ms, repetitions, logits_hash, directory, "
    "manifest, created_at";

Release read_release(db::Stmt& s) {
  Release r;
  r.id = s.i64(0);
  r.job = s.i64(1);
  r.gpu = s.text(2);
  r.run = s.i64(3);
  r.checkpoint = s.text(4);
  r.knobs = s.text(5);
  r.prompts = s.text(6);
  r.median_ms = s.f64(7);
  r.spread_ms = s.f64(8);
  r.repetitions = uint32_t(s.i64(9));
  r.logits_hash = s.text(10);
  r.directory = s.text(11);
  r.manifest = s.text(12);
  r.created_at = s.f64(13);
  return r;
}

std::vector<Release> releases_where(db::Store& st, const std::string& where, int64_t id) {
  auto s = st.connection().prepare(std::string("SELECT ") + kReleaseCols + " FROM releases " + where + " ORDER BY id");
  if (id) s.bind(1, id);
  std::vector<Release> v;
  while (s.next()) v.push_back(read_release(s));
  return v;
}

constexpr const char* kRowCols =
    "release, gpu, job, baseline_ms, baseline_spread_ms, median_ms, spread_ms, repetitions, change_pct, verdict, "
    "reason, logits_hash";

Night read_night(db::Store& st, int64_t night) {
  auto s = st.connection().prepare(std::string("SELECT ") + kRowCols +
                                   " FROM nightly_runs WHERE night = ?1 ORDER BY release, gpu");
  s.bind(1, night);
  Night n{night, {}};
  while (s.next()) {
    NightRow r;
    r.release = s.i64(0);
    r.gpu = s.text(1);
    r.job = s.i64(2);
    r.baseline_ms = s.f64(3);
    r.baseline_spread_ms = s.f64(4);
    r.median_ms = s.f64(5);
    r.spread_ms = s.f64(6);
    r.repetitions = uint32_t(s.i64(7));
    r.change_pct = s.f64(8);
    r.verdict = s.text(9);
    r.reason = s.text(10);
    r.logits_hash = s.text(11);
    n.rows.push_back(std::move(r));
  }
  return n;
}

void check_gpu(const std::string& gpu) {
  if (gpu.empty()) throw InvalidArgument("name the GPU kind (--gpu)");
  if (!find_gpu_kind(gpu)) throw InvalidArgument("unknown GPU kind '" + gpu + "'");
}

// The release's prompts, marked with the night so that the night's job reuses no earlier measurement.
std::string night_prompts(const std::string& prompts, int64_t night) {
  auto j = nlohmann::json::parse(prompts);
  for (auto& p : j) p["night"] = night;
  return j.dump();
}

}  // namespace

Verdict judge(const Baseline& b, const db::Run& now, const VerdictRule& rule) {
  if (!now.valid) {
    bool checks = now.failure == "wrong_results" || now.failure == "race";
    return {checks ? "wrong" : "failed", 0, (now.failure.empty() ? "" : now.failure + ": ") + now.reason};
  }
  if (!now.tokens_equal) return {"wrong", 0, "the greedy tokens differ from the reference's"};
  if (!now.stagger_equal) return {"wrong", 0, "a --stagger run changed the logits (a race)"};
  if (!b.logits_hash.empty() && now.logits_hash != b.logits_hash)
    return {"wrong", 0, "logits checksum " + now.logits_hash + " is not the release's " + b.logits_hash};
  if (!(b.median_ms > 0) || !(now.median_ms > 0) || !std::isfinite(now.median_ms))
    return {"failed", 0, "no usable median to compare"};
  double change = (now.median_ms - b.median_ms) / b.median_ms * 100;
  double band = rule.noise * (b.spread_ms + now.spread_ms);
  if (change > rule.slower_pct && now.median_ms > b.median_ms + band)
    return {"slower", change, "slower by more than " + std::to_string(rule.slower_pct) + "% and outside the noise"};
  if (change < -rule.slower_pct && now.median_ms < b.median_ms - band) return {"faster", change, ""};
  return {"same", change, ""};
}

Candidate Releases::candidate(int64_t job, const std::string& gpu) {
  check_gpu(gpu);
  auto best = core_.best(job, gpu);  // NotFound for an unknown job
  return core_.with_store([&](db::Store& st, double) {
    auto j = st.job(job);
    if (!j) throw NotFound("no job " + std::to_string(job));
    bool tuned = false;
    for (auto& g : j->gpus) tuned |= g == gpu;
    if (!tuned) throw FailedPrecondition("job " + std::to_string(job) + " did not tune for " + gpu);
    if (best.empty())
      throw FailedPrecondition("job " + std::to_string(job) + " has no valid configuration for " + gpu +
                               " (yet): nothing to export");
    Candidate c;
    c.job = job;
    c.gpu = gpu;
    c.run = best.front();
    c.checkpoint = *st.checkpoint(j->checkpoint);
    c.prompts = j->prompts;
    c.arch = find_gpu_kind(gpu)->arch;
    return c;
  });
}

int64_t Releases::record(int64_t job, const std::string& gpu, int64_t run, const std::string& directory,
                         const std::string& manifest) {
  check_gpu(gpu);
  if (directory.empty()) throw InvalidArgument("a release names the directory it was exported to");
  if (!nlohmann::json::accept(manifest) || !nlohmann::json::parse(manifest).is_object())
    throw InvalidArgument("a release's manifest is a JSON object");
  return core_.with_store([&](db::Store& st, double now) {
    auto j = st.job(job);
    if (!j) throw NotFound("no job " + std::to_string(job));
    std::optional<db::Run> r;
    for (auto& x : st.runs(job, gpu))
      if (x.id == run) r = x;
    if (!r) throw NotFound("job " + std::to_string(job) + " has no run " + std::to_string(run) + " on " + gpu);
    if (!r->valid) throw FailedPrecondition("run " + std::to_string(run) + " is not valid: " + r->reason);
    if (!r->verified)
      throw FailedPrecondition("run " + std::to_string(run) +
                               " was screened, not verified (the --stagger checks did not run): only a verified run "
                               "is released");
    db::Transaction t(st.connection());
    st.connection()
        .prepare(
            "INSERT INTO releases (job, gpu, run, checkpoint, knobs, prompts, median_ms, spread_ms, repetitions, "
            "logits_hash, directory, manifest, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
            "?13)")
        .bind(1, job)
        .bind(2, gpu)
        .bind(3, run)
        .bind(4, j->checkpoint)
        .bind(5, r->knobs)
        .bind(6, j->prompts)
        .bind(7, r->median_ms)
        .bind(8, r->spread_ms)
        .bind(9, r->repetitions)
        .bind(10, r->logits_hash)
        .bind(11, directory)
        .bind(12, manifest)
        .bind(13, now)
        .exec();
    int64_t id = st.connection().last_insert_id();
    t.commit();
    return id;
  });
}

std::vector<Release> Releases::list() {
  return core_.with_store([&](db::Store& st, double) { return releases_where(st, "", 0); });
}

Night Releases::start_night(const std::vector<int64_t>& ids, const std::vector<std::string>& gpus) {
  for (auto& g : gpus) check_gpu(g);
  std::set<std::string> kinds(gpus.begin(), gpus.end());
  std::vector<Release> chosen;
  std::map<std::string, std::string> paths;
  core_.with_store([&](db::Store& st, double) {
    for (auto id : ids)
      if (releases_where(st, "WHERE id = ?1", id).empty()) throw NotFound("no release " + std::to_string(id));
    std::set<int64_t> named(ids.begin(), ids.end());
    for (auto& r : releases_where(st, "", 0))
      if ((named.empty() || named.count(r.id)) && (kinds.empty() || kinds.count(r.gpu))) chosen.push_back(r);
    for (auto& r : chosen) paths[r.checkpoint] = st.checkpoint(r.checkpoint)->path;
  });
  if (chosen.empty()) throw FailedPrecondition("no release to re-run (export one with `lane-tune export`)");

  // Each configuration must still be a point of its space: checked before the transaction, as submit does, and its
  // fixed search made there.
  std::map<int64_t, Coordinator::NewSearch> searches;
  for (auto& r : chosen) {
    try {
      Coordinator::NewSearch s;
      s.gpu = r.gpu;
      const nlohmann::json knobs = nlohmann::json::parse(r.knobs);
      // (the space of the release's own context, which its configuration carries)
      s.space = core_.compiler().space(paths[r.checkpoint], *find_gpu_kind(r.gpu), knobs.value("context", 0u));
      s.strategy = fixed_strategy(*s.space, {knobs}, std::max<uint32_t>(r.repetitions, 1));
      s.first = s.strategy->propose(1, 0);
      s.note = "release " + std::to_string(r.id) + ", measured afresh";
      searches[r.id] = std::move(s);
    } catch (const lt::Error& e) {
      throw FailedPrecondition("release " + std::to_string(r.id) + " cannot be re-run: " + e.what());
    }
  }

  return core_.with_store([&](db::Store& st, double now) {
    db::Transaction t(st.connection());
    auto n = st.connection().prepare("SELECT COALESCE(MAX(night), 0) + 1 FROM nightly_runs");
    int64_t night = n.next() ? n.i64(0) : 1;
    n.exec();
    for (auto& r : chosen) {
      db::Job j;
      j.checkpoint = r.checkpoint;
      j.gpus = {r.gpu};
      j.strategy = "fixed";  // exactly the release's configuration, verified
      j.prompts = night_prompts(r.prompts, night);
      j.message = "night " + std::to_string(night) + ": release " + std::to_string(r.id);
      j.created_at = now;
      if (auto tuned = st.job(r.job)) {  // timed on the workload it was tuned on
        j.objective = tuned->objective;
        j.workload_prompt = tuned->workload_prompt;
        j.workload_gen = tuned->workload_gen;
        j.context = tuned->context;
      }
      int64_t job = st.insert_job(j);
      Coordinator::store_search(st, job, searches.at(r.id), now);
      st.connection()
          .prepare(
              "INSERT INTO nightly_runs (night, release, gpu, job, baseline_ms, baseline_spread_ms, verdict, "
              "started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7)")
          .bind(1, night)
          .bind(2, r.id)
          .bind(3, r.gpu)
          .bind(4, job)
          .bind(5, r.median_ms)
          .bind(6, r.spread_ms)
          .bind(7, now)
          .exec();
    }
    t.commit();
    return read_night(st, night);
  });
}

Night Releases::judge_night(int64_t night, const VerdictRule& rule) {
  if (!std::isfinite(rule.slower_pct) || rule.slower_pct < 0 || !std::isfinite(rule.noise) || rule.noise < 0)
    throw InvalidArgument("the verdict's thresholds are numbers, not negative");
  return core_.with_store([&](db::Store& st, double now) {
    auto n = read_night(st, night);
    if (n.rows.empty()) throw NotFound("no night " + std::to_string(night));
    db::Transaction t(st.connection());
    for (auto& row : n.rows) {
      if (row.verdict != "pending") continue;
      auto j = st.job(row.job);
      if (j && j->state == "running") continue;
      auto release = releases_where(st, "WHERE id = ?1", row.release).at(0);
      auto runs = st.runs(row.job, row.gpu);
      Verdict v;
      if (runs.empty()) {
        v = {"failed", 0, "not measured: the job ended " + (j ? j->state + " (" + j->message + ")" : "missing")};
      } else {
        auto& r = runs.front();
        v = judge({release.median_ms, release.spread_ms, release.logits_hash}, r, rule);
        row.median_ms = r.median_ms;
        row.spread_ms = r.spread_ms;
        row.repetitions = r.repetitions;
        row.logits_hash = r.logits_hash;
      }
      st.connection()
          .prepare(
              "UPDATE nightly_runs SET median_ms = ?1, spread_ms = ?2, repetitions = ?3, change_pct = ?4, "
              "logits_hash = ?5, verdict = ?6, reason = ?7, judged_at = ?8 WHERE night = ?9 AND release = ?10 AND "
              "gpu = ?11")
          .bind(1, row.median_ms)
          .bind(2, row.spread_ms)
          .bind(3, row.repetitions)
          .bind(4, v.change_pct)
          .bind(5, row.logits_hash)
          .bind(6, v.verdict)
          .bind(7, v.reason)
          .bind(8, now)
          .bind(9, night)
          .bind(10, row.release)
          .bind(11, row.gpu)
          .exec();
    }
    t.commit();
    return read_night(st, night);
  });
}

}  // namespace lt::coord
