// The releases' core: freezing a job's winner, starting nights that re-measure releases, and judging them.
#include "coordinator/releases.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace lt::coord {
namespace {

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
    Release x;
    x.job = job;
    x.gpu = gpu;
    x.run = run;
    x.checkpoint = j->checkpoint;
    x.knobs = r->knobs;
    x.prompts = j->prompts;
    x.median_ms = r->median_ms;
    x.spread_ms = r->spread_ms;
    x.repetitions = r->repetitions;
    x.logits_hash = r->logits_hash;
    x.directory = directory;
    x.manifest = manifest;
    x.created_at = now;
    db::Transaction t(st.connection());
    const int64_t id = st.insert_release(x);
    t.commit();
    return id;
  });
}

std::vector<Release> Releases::list() {
  return core_.with_store([&](db::Store& st, double) { return st.releases(); });
}

Night Releases::start_night(const std::vector<int64_t>& ids, const std::vector<std::string>& gpus) {
  for (auto& g : gpus) check_gpu(g);
  std::set<std::string> kinds(gpus.begin(), gpus.end());
  std::vector<Release> chosen;
  std::map<std::string, std::string> paths;
  core_.with_store([&](db::Store& st, double) {
    for (auto id : ids)
      if (!st.release(id)) throw NotFound("no release " + std::to_string(id));
    std::set<int64_t> named(ids.begin(), ids.end());
    for (auto& r : st.releases())
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
    const int64_t night = st.next_night();
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
      NightRow row;
      row.release = r.id;
      row.gpu = r.gpu;
      row.job = job;
      row.baseline_ms = r.median_ms;
      row.baseline_spread_ms = r.spread_ms;
      st.insert_night_row(night, row, now);
    }
    t.commit();
    return Night{night, st.night_rows(night)};
  });
}

Night Releases::judge_night(int64_t night, const VerdictRule& rule) {
  if (!std::isfinite(rule.slower_pct) || rule.slower_pct < 0 || !std::isfinite(rule.noise) || rule.noise < 0)
    throw InvalidArgument("the verdict's thresholds are numbers, not negative");
  return core_.with_store([&](db::Store& st, double now) {
    Night n{night, st.night_rows(night)};
    if (n.rows.empty()) throw NotFound("no night " + std::to_string(night));
    db::Transaction t(st.connection());
    for (auto& row : n.rows) {
      if (row.verdict != "pending") continue;
      auto j = st.job(row.job);
      if (j && j->state == "running") continue;
      const auto release = st.release(row.release);
      if (!release)
        throw NotFound("night " + std::to_string(night) + " names no release " + std::to_string(row.release));
      auto runs = st.runs(row.job, row.gpu);
      Verdict v;
      if (runs.empty()) {
        v = {"failed", 0, "not measured: the job ended " + (j ? j->state + " (" + j->message + ")" : "missing")};
      } else {
        auto& r = runs.front();
        v = judge({release->median_ms, release->spread_ms, release->logits_hash}, r, rule);
        row.median_ms = r.median_ms;
        row.spread_ms = r.spread_ms;
        row.repetitions = r.repetitions;
        row.logits_hash = r.logits_hash;
      }
      row.change_pct = v.change_pct;
      row.verdict = v.verdict;
      row.reason = v.reason;
      st.judge_night_row(night, row, now);
    }
    t.commit();
    return Night{night, st.night_rows(night)};
  });
}

std::vector<NightRow> Releases::nights(int64_t job) {
  return core_.with_store([&](db::Store& st, double) {
    if (!st.job(job)) throw NotFound("no job " + std::to_string(job));
    return st.release_nights(job);
  });
}

}  // namespace lt::coord
