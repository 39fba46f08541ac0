// The searches behind the jobs: each GPU kind's strategy kept fed with the results recorded, asked for candidates
// outside the database lock, and its queue of plans topped up; warm starts from other jobs.
#include <chrono>
#include <set>

#include "coordinator/core.hpp"
#include "coordinator/log.hpp"

namespace lt::coord {

Observation Coordinator::observe(const db::Run& r) {
  Observation o;
  o.key = r.key;
  o.knobs = nlohmann::json::parse(r.knobs, nullptr, false);
  if (o.knobs.is_discarded()) o.knobs = nlohmann::json::object();
  o.stage = r.stage;
  o.verify = r.verify;
  o.valid = r.valid;
  o.verified = r.valid && r.verified;
  o.objective_ms = r.objective_ms;
  o.decode_ms = r.median_ms;
  o.prefill_ms = r.prefill_ms;
  o.workload_ms = r.workload_ms;
  o.profile = nlohmann::json::parse(r.profile, nullptr, false);
  if (!o.profile.is_object()) o.profile = nlohmann::json::object();
  o.failure = r.failure;
  return o;
}

std::vector<Seed> Coordinator::warm_seeds_locked(const std::string& gpu, const std::string& architecture) {
  std::vector<Seed> v;
  for (auto& c : store_.warm_candidates(gpu, architecture, 0, 3, int(o_.search.warm) * 4)) {
    auto k = nlohmann::json::parse(c.knobs, nullptr, false);
    if (k.is_object()) v.push_back({k, "warm:" + std::to_string(c.job)});
  }
  return v;
}

void Coordinator::replenish() {
  std::lock_guard one(replenish_m_);
  // One search's turn: what was gathered under the lock, and what its strategy proposed.
  struct Turn {
    db::Search row;
    std::string checkpoint_path;
    uint32_t context = 0;  // the job's
    size_t open = 0, queued = 0, target = 0;  // open: pending or leased; queued: less leased verifications
    std::vector<db::Run> fresh;
    Live* live = nullptr;
    std::vector<Proposal> proposed;
    std::string error;  // the strategy failed: the search stops, saying why
  };
  std::vector<Turn> turns;
  {
    std::lock_guard lock(m_);
    auto rows = store_.active_searches();
    std::set<std::pair<int64_t, std::string>> active;
    for (auto& row : rows) {
      auto j = store_.job(row.job);
      auto ck = j ? store_.checkpoint(j->checkpoint) : std::nullopt;
      if (!ck) continue;
      Turn t;
      t.row = row;
      t.checkpoint_path = ck->path;
      t.context = j->context;
      t.open = size_t(store_.open_plans(row.job, row.gpu));
      t.queued = size_t(store_.queued_plans(row.job, row.gpu));
      t.target = target_locked(row.gpu);
      t.live = &lives_[{row.job, row.gpu}];
      t.fresh = store_.runs_since(row.job, row.gpu, t.live->fed);
      active.insert({row.job, row.gpu});
      turns.push_back(std::move(t));
    }
    for (auto it = lives_.begin(); it != lives_.end();) it = active.count(it->first) ? std::next(it) : lives_.erase(it);
  }

  // The strategies, outside the lock: restored when new here, fed, asked.
  for (auto& t : turns) {
    Live& live = *t.live;
    const auto asked = std::chrono::steady_clock::now();
    try {
      if (!live.strategy) {
        const GpuKind* kind = find_gpu_kind(t.row.gpu);
        if (!kind) throw lt::Error("unknown GPU kind " + t.row.gpu);
        live.space = compiler_->space(t.checkpoint_path, *kind, t.context);
        live.strategy = restore_strategy(*live.space, nlohmann::json::parse(t.row.state));
        live.fed = 0;
      }
      for (auto& r : t.fresh) {
        live.strategy->take(observe(r));
        live.fed = r.id;
      }
      // Topped up when the queue is half empty (and asked when nothing is open: a strategy that waits for a round's
      // end then goes on, or says it is done); else asked for what it wants verified now. Leased verifications do not
      // hold the queue (Store::queued_plans); the strategy is told of every open plan.
      if (t.open == 0 || t.queued * 2 < t.target)
        t.proposed = live.strategy->propose(t.target - t.queued, t.open);
      else
        t.proposed = live.strategy->urgent();
    } catch (const std::exception& e) {
      log(0, "search_failed", {{"job", std::to_string(t.row.job)}, {"gpu", t.row.gpu}, {"error", e.what()}});
      t.error = e.what();
      live = Live{};
    }
    // (-v: how long a turn takes, fed and asked, where it proposed: a worker without plans waits that long)
    if (!t.proposed.empty())
      log(1, "search_proposed",
          {{"job", std::to_string(t.row.job)},
           {"gpu", t.row.gpu},
           {"plans", std::to_string(t.proposed.size())},
           {"open", std::to_string(t.open)},
           {"fed", std::to_string(t.fresh.size())},
           {"ms", std::to_string(
                      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count())}});
  }

  // What they proposed, stored with their state in one transaction.
  std::lock_guard lock(m_);
  try {
    db::Transaction tx(store_.connection());
    for (auto& t : turns) {
      auto j = store_.job(t.row.job);
      if (!j || j->state != "running") {
        *t.live = Live{};
        continue;
      }
      if (!t.error.empty()) {
        db::Search row = t.row;
        row.done = true;
        row.note = "the search stopped: " + t.error;
        row.updated_at = now();
        store_.update_search(row);
        check_complete_locked(t.row.job);
        continue;
      }
      Strategy& st = *t.live->strategy;
      for (auto& c : t.proposed) {
        int64_t config = store_.add_config(t.row.job, t.row.gpu, c.key, c.knobs.dump(), c.origin);
        store_.add_plan(t.row.job, t.row.gpu, config, c.stage, c.repetitions, c.verify, c.profile);
      }
      db::Search row = t.row;
      row.state = st.save().dump();
      row.planned = st.planned();
      row.note = st.note();
      row.done = st.done();
      row.updated_at = now();
      if (!t.proposed.empty() || row.state != t.row.state || row.planned != t.row.planned || row.note != t.row.note ||
          row.done != t.row.done)
        store_.update_search(row);
      check_complete_locked(t.row.job);
    }
    tx.commit();
  } catch (...) {
    // The database did not take what the strategies proposed: they are restored from it next time.
    for (auto& t : turns) *t.live = Live{};
    throw;
  }
}

}  // namespace lt::coord
