// The worker's loop: lease, prepare ahead on CPU threads, measure one at a time, report, heartbeat meanwhile.
#include "worker/worker.hpp"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace lt::worker {

namespace {
// A leased plan whose CPU work runs ahead of its measurement.
struct Pending {
  LeasedPlan plan;
  std::future<std::function<Result()>> prepared;
};
}  // namespace

// The loop's state: the link, the leases held, the heartbeat thread.
struct Worker::Impl {
  Options o;
  std::unique_ptr<Link> link;
  std::unique_ptr<Runner> runner;
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> id{0};
  double lease_s = 30;
  std::mutex m;  // guards active, lost
  std::condition_variable cv;
  std::map<int64_t, std::shared_ptr<std::atomic<bool>>> active;  // leases held, and the flag that stops each
  std::set<int64_t> lost;
  // Each job's best objective known here (the coordinator's at a lease, lowered by this worker's results): one value
  // shared by the job's plans, so that a screen's cutoff is as fresh as the worker's knowledge when it is measured.
  std::map<int64_t, std::shared_ptr<std::atomic<double>>> best;
  std::mutex cache_m;  // guards the checkpoint cache and in_place
  // Checkpoints read where the coordinator reads them: path -> (digest, modification time) once checked.
  std::map<std::string, std::pair<std::string, std::filesystem::file_time_type>> in_place;

  void sleep(double s) {
    std::unique_lock lock(m);
    cv.wait_for(lock, std::chrono::duration<double>(s), [&] { return stopping.load(); });
  }

  // Registers, trying again with a backoff while the coordinator cannot take it (Options::retry_min_s); false when
  // stopped first. Throws when the coordinator refuses the worker, or past Options::give_up_s.
  bool connect() {
    const auto start = std::chrono::steady_clock::now();
    Backoff backoff(o.retry_min_s, o.retry_max_s);
    for (int attempt = 1; !stopping; ++attempt) {
      try {
        auto [wid, ls] = link->register_worker(o.name, o.gpu);
        id = wid;
        lease_s = ls;
        log(0, "registered", {{"worker", std::to_string(wid)}, {"gpu", o.gpu.kind}, {"name", o.name}});
        return true;
      } catch (const LinkError& e) {
        if (!e.retry()) throw;
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (o.give_up_s > 0 && waited > o.give_up_s)
          throw lt::Error("cannot register with the coordinator after " + std::to_string(attempt) + " attempts in " +
                          std::to_string(int(waited)) + " s; giving up: " + e.what());
        const double wait = backoff.next();
        log(0, "registration_retry",
            {{"attempt", std::to_string(attempt)}, {"wait_s", std::to_string(wait)}, {"error", e.what()}});
        sleep(wait);
      }
    }
    return false;
  }

  void heartbeats() {
    while (!stopping) {
      sleep(std::max(0.2, lease_s / 3));
      std::vector<int64_t> held;
      {
        std::lock_guard lock(m);
        for (auto& [lease, flag] : active) held.push_back(lease);
      }
      if (held.empty() || stopping) continue;
      try {
        auto gone = link->heartbeat(id, held);
        std::lock_guard lock(m);
        for (auto l : gone) {
          lost.insert(l);
          if (auto it = active.find(l); it != active.end()) *it->second = true;
        }
      } catch (const LinkError& e) {
        log(1, "heartbeat_failed", {{"error", e.what()}});
      }
    }
  }

  // The checkpoint's path on this machine: where the coordinator reads it, when this machine sees the same file there
  // (same host or a shared filesystem: its digest checked once), else the worker's cache, fetched into it once.
  std::filesystem::path checkpoint(const LeasedPlan& p) {
    // (The digest names files here: why_malformed took it as 32 hex digits when the plan arrived.)
    std::lock_guard lock(cache_m);
    std::error_code ec;
    if (!p.checkpoint_path.empty()) {
      const std::filesystem::path there(p.checkpoint_path);
      if (std::filesystem::is_regular_file(there, ec) && std::filesystem::file_size(there, ec) == p.checkpoint_size) {
        const auto stamp = std::filesystem::last_write_time(there, ec);
        auto seen = in_place.find(there.string());
        if (seen != in_place.end() && seen->second.first == p.checkpoint && seen->second.second == stamp) return there;
        const auto t0 = std::chrono::steady_clock::now();
        if (content_digest(there) == p.checkpoint) {
          in_place[there.string()] = {p.checkpoint, stamp};
          log(0, "checkpoint_in_place",
              {{"path", there.string()},
               {"digest_s",
                std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count())}});
          return there;
        }
        log(0, "checkpoint_differs", {{"path", there.string()}, {"digest", p.checkpoint}});
      }
    }
    auto path = o.cache_dir / "checkpoints" / (p.checkpoint + ".gguf");
    if (std::filesystem::exists(path) && std::filesystem::file_size(path, ec) == p.checkpoint_size) return path;
    std::filesystem::create_directories(path.parent_path());
    auto part = path;
    part += ".part";
    log(0, "fetching_checkpoint", {{"digest", p.checkpoint}, {"bytes", std::to_string(p.checkpoint_size)}});
    const auto t0 = std::chrono::steady_clock::now();
    link->fetch(p.checkpoint, part);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (content_digest(part) != p.checkpoint)
      throw lt::Error("the checkpoint fetched for " + p.checkpoint + " does not match its digest");
    std::filesystem::rename(part, path);
    log(0, "fetched_checkpoint",
        {{"digest", p.checkpoint},
         {"seconds", std::to_string(s)},
         {"mb_per_s", std::to_string(s > 0 ? double(p.checkpoint_size) / 1e6 / s : 0)}});
    return path;
  }

  // Lowers `best` to `ms` when it is known (> 0) and below it.
  static void lower(std::atomic<double>& best, double ms) {
    if (!(ms > 0)) return;
    double seen = best.load();
    while ((seen == 0 || ms < seen) && !best.compare_exchange_weak(seen, ms)) {
    }
  }

  Pending start(LeasedPlan p) {
    {
      std::lock_guard lock(m);
      active[p.lease] = p.cancelled;
      auto& shared = best[p.job];
      if (!shared) shared = std::make_shared<std::atomic<double>>(0);
      lower(*shared, p.best_ms->load());
      p.best_ms = shared;
    }
    Pending x{p, {}};
    x.prepared = std::async(std::launch::async, [this, p] {
      std::filesystem::path ck = runner->needs_checkpoint() ? checkpoint(p) : std::filesystem::path();
      return runner->prepare(p, ck);
    });
    return x;
  }

  // Leased plans into the queue, each started preparing; a plan the worker cannot read as sent is reported failed at
  // once, never measured or guessed at.
  void admit(const std::vector<LeasedPlan>& leased, std::deque<Pending>& queue) {
    for (auto& p : leased) {
      if (auto why = why_malformed(p)) {
        log(0, "plan_malformed", {{"plan", std::to_string(p.plan)}, {"error", *why}});
        report(p, Result::invalid(failure::kBadPlan, "the worker cannot read the plan: " + *why));
        continue;
      }
      log(1, "leased",
          {{"plan", std::to_string(p.plan)},
           {"job", std::to_string(p.job)},
           {"verify", p.verify ? "1" : "0"},
           {"knobs", p.knobs.dump()}});
      queue.push_back(start(p));
    }
  }

  // One plan the coordinator has pending, if any, into the queue (a verification only, when `verifications_only`); the
  // coordinator unreachable or refusing: none now, the loop goes on with what it holds. Returns how many it leased.
  size_t lease_one(std::deque<Pending>& queue, bool verifications_only) {
    try {
      const auto leased = link->lease(id, 1, verifications_only);
      admit(leased, queue);
      return leased.size();
    } catch (const LinkError& e) {
      log(2, "lease_failed", {{"error", e.what()}, {"verifications_only", verifications_only ? "1" : "0"}});
      return 0;
    }
  }

  void release(int64_t lease) {
    std::lock_guard lock(m);
    active.erase(lease);
    lost.erase(lease);
  }

  // Reports a result, retrying while the coordinator is unreachable (it may be restarting).
  void report(const LeasedPlan& p, const Result& r) {
    for (int attempt = 0; !stopping || attempt == 0; ++attempt) {
      try {
        bool rec = link->report(id, p, r);
        log(1, "reported",
            {{"plan", std::to_string(p.plan)},
             {"valid", r.valid ? "1" : "0"},
             {"median_ms", std::to_string(r.median_ms)},
             {"recorded", rec ? "1" : "0"}});
        return;
      } catch (const LinkError& e) {
        if (e.unknown_worker() && connect()) continue;
        if (!e.retry()) {
          log(0, "report_refused", {{"plan", std::to_string(p.plan)}, {"error", e.what()}});
          return;
        }
        log(1, "report_retry", {{"plan", std::to_string(p.plan)}, {"error", e.what()}});
      }
      sleep(1);
    }
  }

  // A measurement under way: with a runner that overlaps, its checks may still run while the next one measures.
  struct Running {
    LeasedPlan plan;
    std::future<Result> result;
    double wait_prepare_s = 0;
  };

  // Takes a plan's result: reports it (unless its lease was lost meanwhile) and lets its lease go. `wait_prepare_s`:
  // how long the GPU waited for the plan's preparation (its kernels still building) once it was next.
  void take(const LeasedPlan& plan, Result r, double wait_prepare_s) {
    if (*plan.cancelled) {
      log(1, "lease_lost", {{"plan", std::to_string(plan.plan)}, {"while", "measuring"}});
      release(plan.lease);
      return;
    }
    if (r.environment.empty()) r.environment = o.gpu.environment();
    if (r.cost.is_object()) r.cost["wait_prepare_s"] = wait_prepare_s;
    if (r.valid && !r.cut_off()) lower(*plan.best_ms, objective_figure(plan.cutoff_on, r));
    report(plan, r);
    release(plan.lease);
  }
  void finish(Running& x) { take(x.plan, x.result.get(), x.wait_prepare_s); }

  void loop() {
    if (!connect()) return;
    std::thread heart([this] { heartbeats(); });
    std::deque<Pending> queue;
    // The measurement under way beside the next (runners whose measurements overlap: the next one's GPU part runs
    // while this one's checks finish).
    std::optional<Running> running;
    // Verifications finishing on threads of their own: a verification's checks may wait on the CPU reference's verdict
    // (a minute on an 8B model, once a job), which must not hold up the measurements behind it.
    std::list<std::future<void>> finishing;
    auto reap = [&](bool all) {
      for (auto it = finishing.begin(); it != finishing.end();)
        if (all || it->wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
          it->get();
          it = finishing.erase(it);
        } else {
          ++it;
        }
    };
    const bool overlap = runner->overlaps();
    try {
      while (!stopping) {
        if (queue.size() < o.prefetch) {
          try {
            const auto asked = std::chrono::steady_clock::now();
            auto leased = link->lease(id, uint32_t(o.prefetch - queue.size()), false);
            log(2, "lease_call",
                {{"plans", std::to_string(leased.size())},
                 {"ms", std::to_string(
                            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count())}});
            admit(leased, queue);
            if (!leased.empty() && queue.empty() && !running) continue;  // none it could read: not idle, ask again
          } catch (const LinkError& e) {
            if (e.unknown_worker()) {
              connect();
              continue;
            } else {
              log(1, "lease_failed", {{"error", e.what()}});
              if (queue.empty() && !running) sleep(o.idle_poll_s);
            }
          }
        }
        if (queue.empty()) {
          if (running) {
            finish(*running);
            running.reset();
            continue;
          }
          if (o.exit_when_idle) break;
          sleep(o.idle_poll_s);
          continue;
        }
        // The next plan: a prepared verification first (the front of a search is verified while the screens behind
        // it wait, so that the end of a time budget finds it verified), else the first plan prepared (a plan still
        // building its kernels does not hold the GPU up), else whichever is prepared first.
        auto ready = [](const Pending& x) {
          return x.prepared.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        };
        // While none is prepared and the queue is full (its plans building their kernels), the worker asks now and
        // then for a verification alone: a search's front, verified at once on a GPU that would idle (a 2-minute job
        // on qwen3-0.6b ended with its fastest screen unverified behind 8 screens building, session 38); and when
        // none is pending, for one more plan, up to `stalled_extra` beyond the queue's size, which may need no build.
        const auto picked = std::chrono::steady_clock::now();
        auto polled = picked;
        auto next = queue.end();
        for (;;) {
          next = std::find_if(queue.begin(), queue.end(), [&](const Pending& x) { return x.plan.verify && ready(x); });
          if (next == queue.end()) next = std::find_if(queue.begin(), queue.end(), ready);
          if (next != queue.end() || stopping) break;
          if (queue.size() >= o.prefetch && o.verify_poll_s > 0 &&
              std::chrono::steady_clock::now() - polled >= std::chrono::duration<double>(o.verify_poll_s)) {
            polled = std::chrono::steady_clock::now();
            const bool verifying =
                std::any_of(queue.begin(), queue.end(), [](const Pending& x) { return x.plan.verify; });
            if (!verifying && lease_one(queue, true) > 0) continue;
            if (queue.size() < size_t(o.prefetch) + o.stalled_extra) lease_one(queue, false);
            continue;
          }
          queue.front().prepared.wait_for(std::chrono::milliseconds(2));  // none prepared yet: whichever is first
        }
        if (next == queue.end()) next = queue.begin();
        Pending cur = std::move(*next);
        queue.erase(next);
        bool gone;
        {
          std::lock_guard lock(m);
          gone = lost.count(cur.plan.lease) > 0;
        }
        std::function<Result()> measure;
        try {
          measure = cur.prepared.get();
        } catch (const std::exception& e) {
          log(0, "prepare_failed", {{"plan", std::to_string(cur.plan.plan)}, {"error", e.what()}});
          release(cur.plan.lease);
          continue;
        }
        if (gone) {
          log(1, "lease_lost", {{"plan", std::to_string(cur.plan.plan)}});
          release(cur.plan.lease);
          continue;
        }
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - picked).count();
        if (!overlap) {
          take(cur.plan, measure(), waited);
          continue;
        }
        Running now{cur.plan, std::async(std::launch::async, std::move(measure)), waited};
        if (running && running->plan.verify)
          finishing.push_back(std::async(std::launch::async, [this, x = std::move(*running)]() mutable { finish(x); }));
        else if (running)
          finish(*running);
        running = std::move(now);
        reap(false);
      }
      if (running) finish(*running);
      reap(true);
    } catch (...) {
      stopping = true;
      cv.notify_all();
      heart.join();
      throw;
    }
    stopping = true;
    cv.notify_all();
    heart.join();
  }
};

Backoff::Backoff(double min_s, double max_s, uint64_t seed) : bound_(min_s), max_s_(max_s), rng_(seed) {}

double Backoff::next() {
  const double bound = std::min(bound_, max_s_);
  bound_ = bound * 2;
  return std::uniform_real_distribution<double>(bound / 2, bound)(rng_);
}

Worker::Worker(Options o, std::unique_ptr<Link> link, std::unique_ptr<Runner> runner)
    : impl_(std::make_unique<Impl>()) {
  impl_->o = std::move(o);
  impl_->link = std::move(link);
  impl_->runner = std::move(runner);
}

Worker::~Worker() = default;

void Worker::run() {
  impl_->loop();
}

void Worker::stop() {
  impl_->stopping = true;
  impl_->cv.notify_all();
}

}  // namespace lt::worker
