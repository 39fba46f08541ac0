// The worker's loop against a stand-in coordinator: prepares the next plan while measuring the current one, skips
// plans whose lease was lost, retries reports while the coordinator is away, registers again when forgotten (and
// backs off while the coordinator cannot take it), reports plans it cannot read as failed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "support/test_support.hpp"
#include "worker/worker.hpp"

namespace lt::worker {
namespace {

using Clock = std::chrono::steady_clock;

// A coordinator in memory: a queue of plans, leases lost on demand, reports that fail a few times first.
struct FakeLink : Link {
  std::mutex m;
  std::vector<LeasedPlan> queue;
  std::vector<std::pair<int64_t, Result>> reports;
  std::set<int64_t> lost;
  int registrations = 0;
  int fail_registrations = 0;  // the next registrations the coordinator cannot take (its disk full, say)
  int fail_reports = 0;        // the next reports that find the coordinator unavailable
  bool forget_worker = false;  // the next lease finds this worker unknown
  int verify_polls = 0;        // leases asking for verifications only
  // Told, outside the lock, of each report recorded and of each heartbeat's answer (the leases it said were lost).
  std::function<void(int64_t plan)> on_report;
  std::function<void(const std::vector<int64_t>& lost)> on_heartbeat;

  std::pair<int64_t, double> register_worker(const std::string&, const Gpu&) override {
    std::lock_guard l(m);
    if (fail_registrations > 0) {
      --fail_registrations;
      throw LinkError("coordinator: the coordinator's disk is full (code 8)", true);
    }
    ++registrations;
    return {registrations, 0.6};
  }
  std::vector<LeasedPlan> lease(int64_t, uint32_t max, bool verifications_only) override {
    std::lock_guard l(m);
    if (forget_worker) {
      forget_worker = false;
      throw LinkError("no worker 1 (register again)", false, true);
    }
    std::vector<LeasedPlan> v;
    for (auto it = queue.begin(); it != queue.end() && v.size() < max;)
      if (!verifications_only || it->verify) {
        v.push_back(*it);
        it = queue.erase(it);
      } else {
        ++it;
      }
    if (verifications_only) ++verify_polls;
    return v;
  }
  std::vector<int64_t> heartbeat(int64_t, const std::vector<int64_t>& leases) override {
    std::vector<int64_t> v;
    {
      std::lock_guard l(m);
      for (auto x : leases)
        if (lost.count(x)) v.push_back(x);
    }
    if (on_heartbeat) on_heartbeat(v);
    return v;
  }
  bool report(int64_t, const LeasedPlan& p, const Result& r) override {
    {
      std::lock_guard l(m);
      if (fail_reports > 0) {
        --fail_reports;
        throw LinkError("unavailable", true);
      }
      reports.emplace_back(p.plan, r);
    }
    if (on_report) on_report(p.plan);
    return true;
  }
  void fetch(const std::string&, const std::filesystem::path&) override { FAIL() << "no checkpoint is needed"; }
};

// A runner that records when it prepared and measured each plan; a measurement takes `ms`. A plan's preparation and
// its measurement may first wait until a condition on the record holds (`prepare_after`, `measure_after`): the tests
// order events by these waits, never by how long something takes.
struct FakeRunner : Runner {
  std::mutex m;                     // guards the record, and what a test keeps beside it for its conditions
  std::condition_variable changed;  // the record changed
  std::map<int64_t, Clock::time_point> prepared, measured_start, measured_end;
  // Plans whose preparing thread ended, so that the worker sees each prepared (its future for the plan is ready then):
  // a promise made ready at the thread's exit, watched by one of `watchers`.
  std::set<int64_t> ready;
  std::vector<std::thread> watchers;
  std::vector<int64_t> started;         // plans in the order their measurements started
  std::map<int64_t, double> best_seen;  // the job's best the plan's cutoff would use, when it was measured
  std::map<int64_t, int> prepare_ms;    // plans whose preparation (kernels building) then takes this long
  int ms = 0;
  // Conditions on the record (checked under m) a plan's preparation and measurement wait for; none: no wait.
  std::function<bool(int64_t plan)> prepare_after, measure_after;
  // The first wait that ran out ("plan 1's measurement"); empty when none did. A wait ends after 10 s at most, a
  // deadline only a broken worker meets, and none waits once one ran out, so that such a test fails quickly.
  std::string ran_out;
  double wait_s = 10;  // the waits' deadline

  // Waits until `until(plan)` holds; REQUIRES: l holds m.
  void wait(std::unique_lock<std::mutex>& l, const std::function<bool(int64_t)>& until, int64_t plan,
            const char* what) {
    if (!until || !ran_out.empty()) return;
    if (!changed.wait_for(l, std::chrono::duration<double>(wait_s), [&] { return until(plan); }))
      ran_out = "plan " + std::to_string(plan) + "'s " + what;
  }
  // Changes the record (or a test's state beside it) and wakes the waits.
  void note(const std::function<void()>& change) {
    {
      std::lock_guard l(m);
      change();
    }
    changed.notify_all();
  }
  // The plan's preparation, on the worker's thread for it: waits for prepare_after, takes prepare_ms, records that the
  // plan is prepared, and that it is ready once the thread ends.
  void build(const LeasedPlan& p) {
    int hold_ms = 0;
    {
      std::unique_lock l(m);
      wait(l, prepare_after, p.plan, "preparation");
      if (auto it = prepare_ms.find(p.plan); it != prepare_ms.end()) hold_ms = it->second;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    note([&] { prepared[p.plan] = Clock::now(); });
    auto ended = std::make_shared<std::promise<void>>();
    std::future<void> at_exit = ended->get_future();
    ended->set_value_at_thread_exit();
    std::lock_guard l(m);
    watchers.emplace_back([this, plan = p.plan, ended, at_exit = std::move(at_exit)] {
      const bool ends = at_exit.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
      note([&] {
        if (ends)
          ready.insert(plan);
        else if (ran_out.empty())
          ran_out = "plan " + std::to_string(plan) + "'s preparing thread";
      });
    });
  }
  ~FakeRunner() override {
    for (std::thread& t : watchers) t.join();
  }
  // With first_waits, the first measurement waits (10 s at most) until another plan, not yet measured, is prepared;
  // `ahead` says whether one was: the worker prepared the next plan while measuring, whatever either takes.
  bool first_waits = false;
  std::optional<bool> ahead;
  bool needs_checkpoint() const override { return false; }
  std::function<Result()> prepare(const LeasedPlan& p, const std::filesystem::path&) override {
    build(p);
    return [this, p] {
      {
        std::unique_lock l(m);
        measured_start[p.plan] = Clock::now();
        started.push_back(p.plan);
        best_seen[p.plan] = p.best_ms->load();
        changed.notify_all();
        if (first_waits && !ahead)
          ahead = changed.wait_for(l, std::chrono::seconds(10), [&] {
            return std::any_of(prepared.begin(), prepared.end(),
                               [&](const auto& x) { return x.first != p.plan && !measured_start.count(x.first); });
          });
        wait(l, measure_after, p.plan, "measurement");
      }
      auto end = Clock::now() + std::chrono::milliseconds(ms);
      while (Clock::now() < end && !*p.cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      note([&] { measured_end[p.plan] = Clock::now(); });
      Result r;
      r.valid = true;
      r.median_ms = double(p.plan);
      return r;
    };
  }
};

LeasedPlan plan(int64_t id) {
  LeasedPlan p;
  p.plan = id;
  p.lease = 100 + id;
  p.gpu = "h200";
  p.checkpoint = std::string(32, '0');
  p.knobs = nlohmann::json::object();
  p.prompts = {{8, {1, 2, 3}}};
  return p;
}

// Plans 1 to n into the link's queue, screens but plan `verify` (0: none), the front's verification.
void push_plans(FakeLink& l, int n, int verify) {
  for (int i = 1; i <= n; ++i) {
    l.queue.push_back(plan(i));
    l.queue.back().verify = i == verify;
  }
}

Options options() {
  Options o;
  o.name = "test";
  o.gpu.kind = "h200";
  o.exit_when_idle = true;
  o.idle_poll_s = 0.05;
  return o;
}

TEST(WorkerLoop, PreparesTheNextPlanWhileMeasuringAndReportsEach) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  r->ms = 0;
  r->first_waits = true;
  for (int i = 1; i <= 4; ++i) l->queue.push_back(plan(i));
  l->fail_reports = 2;
  Worker w(options(), std::move(link), std::move(runner));
  w.run();
  ASSERT_EQ(l->reports.size(), 4u);
  std::set<int64_t> reported;
  for (auto& [id, res] : l->reports) reported.insert(id);
  EXPECT_EQ(reported, (std::set<int64_t>{1, 2, 3, 4}));
  ASSERT_TRUE(r->ahead.has_value());
  EXPECT_TRUE(*r->ahead) << "no plan was prepared while the first was measured";
  EXPECT_FALSE(l->reports[0].second.environment.empty());
}

// A prepared verification is measured before the prepared screens leased ahead of it: plan 1, the only one prepared
// at first, is measured until the worker sees the three others prepared.
TEST(WorkerLoop, AVerificationGoesAheadOfTheScreensLeasedBeforeIt) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  push_plans(*l, 4, 4);  // three screens, then the front's verification
  r->prepare_after = [r](int64_t id) { return id == 1 || r->measured_start.count(1) > 0; };
  r->measure_after = [r](int64_t id) { return id != 1 || r->ready.size() == 4; };
  Options o = options();
  o.prefetch = 4;
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  EXPECT_EQ(r->ran_out, "");
  std::vector<int64_t> order;
  for (auto& [id, res] : l->reports) order.push_back(id);
  EXPECT_EQ(order, (std::vector<int64_t>{1, 4, 2, 3}));
}

// What a worker of prefetch 2 did with `plans` plans at the coordinator (plan `verify` a verification, 0: none), their
// preparations waiting until `ready(runner, plan)` holds (none past `wait_s`): the order of its reports, its
// verifications-only leases, the runner's wait that ran out.
struct Outcome {
  std::vector<int64_t> order;
  int polls;
  std::string ran_out;
};
Outcome run_building(int plans, int verify, std::function<bool(FakeRunner&, int64_t)> ready, Options o, double wait_s) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  push_plans(*l, plans, verify);
  r->prepare_after = [r, ready](int64_t id) { return ready(*r, id); };
  r->wait_s = wait_s;
  o.prefetch = 2;
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  Outcome out{{}, l->verify_polls, r->ran_out};
  for (auto& [id, res] : l->reports) out.order.push_back(id);
  return out;
}

// A worker whose plans are all still building asks for verifications alone (its queue full), and measures the one the
// coordinator had pending meanwhile: plans 1 and 2 (screens) build until plan 3, the front's verification queued
// behind them at the coordinator, has been measured. Without the polls the verification waits for a screen's build
// (here, until the runner's wait runs out).
TEST(WorkerLoop, PlansStillBuildingLetAPendingVerificationIn) {
  auto run = [](double verify_poll_s, double wait_s) {
    Options o = options();
    o.verify_poll_s = verify_poll_s;
    return run_building(
        3, 3, [](FakeRunner& r, int64_t id) { return id == 3 || r.measured_end.count(3) > 0; }, o, wait_s);
  };
  const Outcome polled = run(0.05, 10);
  EXPECT_EQ(polled.ran_out, "");
  ASSERT_EQ(polled.order.size(), 3u);
  EXPECT_EQ(polled.order.front(), 3);
  EXPECT_GE(polled.polls, 1);
  const Outcome waited = run(0, 0.3);
  EXPECT_NE(waited.ran_out, "");
  EXPECT_EQ(waited.polls, 0);
}

// A worker whose plans are all still building, with no verification pending, leases more plans one a poll, up to
// `stalled_extra` beyond its queue: plans 1 and 2 build until plan 4 (the second extra) has been measured, then plan 5
// is leased as the queue has room again. Without extras the worker waits for plan 1's or 2's build (here, until the
// runner's wait runs out).
TEST(WorkerLoop, PlansStillBuildingLetMorePlansIn) {
  auto run = [](uint32_t extra, double wait_s) {
    Options o = options();
    o.verify_poll_s = 0.05;
    o.stalled_extra = extra;
    return run_building(
        5, 0, [](FakeRunner& r, int64_t id) { return id > 2 || r.measured_end.count(4) > 0; }, o, wait_s);
  };
  const Outcome extra = run(2, 10);
  EXPECT_EQ(extra.ran_out, "");
  ASSERT_EQ(extra.order.size(), 5u);
  EXPECT_EQ(std::vector<int64_t>(extra.order.begin(), extra.order.begin() + 2), (std::vector<int64_t>{3, 4}));
  EXPECT_GE(extra.polls, 2);  // a verification asked for first, each time
  const Outcome none = run(0, 0.3);
  EXPECT_NE(none.ran_out, "");
}

// A plan still building its kernels does not hold the GPU up: the plans prepared behind it are measured first, and
// each result says how long the GPU waited for it. Plan 1's build ends 100 ms after plans 2 and 3 were measured.
TEST(WorkerLoop, APlanStillPreparingLetsThePreparedOnesGoFirst) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  push_plans(*l, 3, 0);  // screens: the first prepared goes first
  r->prepare_after = [r](int64_t id) { return id != 1 || (r->measured_end.count(2) && r->measured_end.count(3)); };
  r->prepare_ms[1] = 100;
  Options o = options();
  o.prefetch = 3;
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  EXPECT_EQ(r->ran_out, "");
  ASSERT_EQ(l->reports.size(), 3u);
  EXPECT_EQ(l->reports.back().first, 1);  // measured last, once built
  for (auto& [id, res] : l->reports) ASSERT_TRUE(res.cost.contains("wait_prepare_s")) << res.cost.dump();
  // The GPU waited on plan 1's build: most of its last 100 ms (which began before the worker turned to it), and at
  // most from the end of plan 2's or 3's measurement to the start of plan 1's.
  const auto one = std::find_if(l->reports.begin(), l->reports.end(), [](const auto& x) { return x.first == 1; });
  const double waited = one->second.cost["wait_prepare_s"].get<double>();
  const double idle =
      std::chrono::duration<double>(r->measured_start[1] - std::max(r->measured_end[2], r->measured_end[3])).count();
  EXPECT_GT(waited, 0.02);
  EXPECT_LE(waited, idle);
}

// A runner whose measurements overlap (the CUDA runner: the GPU's part under its lock, the checks beside the next
// measurement). A plan's checks may wait until a condition on the record holds (`checks_after`).
struct OverlappingRunner : FakeRunner {
  std::mutex gpu;
  std::map<int64_t, Clock::time_point> checks_end;
  std::function<bool(int64_t plan)> checks_after;
  bool overlaps() const override { return true; }
  std::function<Result()> prepare(const LeasedPlan& p, const std::filesystem::path&) override {
    build(p);
    return [this, p] {
      {
        std::lock_guard g(gpu);
        note([&] {
          measured_start[p.plan] = Clock::now();
          started.push_back(p.plan);
        });
      }
      {
        // The checks; a verification's wait on the CPU reference's verdict, as early in a job.
        std::unique_lock l(m);
        wait(l, checks_after, p.plan, "checks");
        checks_end[p.plan] = Clock::now();
      }
      changed.notify_all();
      Result r;
      r.valid = true;
      return r;
    };
  }
};

// The next plan's GPU part starts while the one before it is still being checked, and every result is reported. Each
// plan is prepared once the one before it started its GPU part, and its checks end once the next one's started.
TEST(WorkerLoop, TheNextMeasurementRunsWhileTheOneBeforeIsChecked) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<OverlappingRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  push_plans(*l, 4, 0);
  r->prepare_after = [r](int64_t id) { return id == 1 || r->measured_start.count(id - 1) > 0; };
  r->checks_after = [r](int64_t id) { return id == 4 || r->measured_start.count(id + 1) > 0; };
  Options o = options();
  o.prefetch = 4;
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  EXPECT_EQ(r->ran_out, "");
  std::set<int64_t> reported;
  for (auto& [id, res] : l->reports) reported.insert(id);
  EXPECT_EQ(reported, (std::set<int64_t>{1, 2, 3, 4}));
  ASSERT_EQ(r->started.size(), 4u);
  for (size_t i = 1; i < 4; ++i) {
    const int64_t before = r->started[i - 1], next = r->started[i];
    EXPECT_TRUE(r->measured_start[next] < r->checks_end[before])
        << "plan " << next << "'s GPU part started after plan " << before << "'s checks ended";
  }
}

// A verification whose checks wait long (the CPU reference's verdict) holds up neither the GPU nor the reports of the
// screens measured after it: measured first, its checks end only once the three screens were reported.
TEST(WorkerLoop, AVerificationWaitingOnItsChecksHoldsNothingUp) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<OverlappingRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  push_plans(*l, 4, 1);
  std::set<int64_t> reported;  // under r->m
  l->on_report = [r, &reported](int64_t id) { r->note([&] { reported.insert(id); }); };
  r->prepare_after = [r](int64_t id) { return id == 1 || r->measured_start.count(1) > 0; };
  r->checks_after = [&reported](int64_t id) { return id != 1 || reported == std::set<int64_t>{2, 3, 4}; };
  Options o = options();
  o.prefetch = 4;
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  EXPECT_EQ(r->ran_out, "");
  ASSERT_EQ(l->reports.size(), 4u);
  EXPECT_EQ(l->reports.back().first, 1);  // reported once its checks are done, after the screens behind it
  for (int i = 2; i <= 4; ++i)
    EXPECT_TRUE(r->checks_end[i] < r->checks_end[1]) << "plan " << i << "'s checks ended after the verification's";
}

// A plan the worker cannot read as sent is reported failed (bad_plan, saying why) and never measured: a checkpoint
// digest that is not 32 hex digits (never used as a file name: nothing fetched), knobs the link could not read, knobs
// that are not an object, a prompt without tokens. The plans around them are measured as usual.
TEST(WorkerLoop, ReportsAPlanItCannotReadAsFailed) {
  struct NeedsCheckpoint : FakeRunner {
    bool needs_checkpoint() const override { return true; }
  };
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<NeedsCheckpoint>();
  auto* l = link.get();
  auto* r = runner.get();
  for (int i = 1; i <= 5; ++i) l->queue.push_back(plan(i));
  l->queue[0].checkpoint = "../../../etc/passwd";
  l->queue[1].unreadable = "the plan's knobs: unexpected end of input";
  l->queue[2].knobs = nlohmann::json::array();
  l->queue[3].prompts = {{8, {}}};
  l->queue[4].checkpoint = "";
  Worker w(options(), std::move(link), std::move(runner));
  w.run();  // (FakeLink::fetch fails the test if called)
  ASSERT_EQ(l->reports.size(), 5u);
  const char* why[] = {"digest", "unexpected end of input", "not a JSON object", "no tokens", "digest"};
  for (auto& [id, res] : l->reports) {
    EXPECT_FALSE(res.valid);
    EXPECT_EQ(res.failure, failure::kBadPlan);
    EXPECT_NE(res.reason.find(why[id - 1]), std::string::npos) << res.reason;
  }
  EXPECT_TRUE(r->measured_start.empty());
}

// Registration the coordinator cannot take (its disk full, out of resources, unreachable) is tried again with growing,
// jittered waits, and the worker goes on once it is taken.
TEST(WorkerLoop, RetriesRegistrationWithABackoff) {
  auto link = std::make_unique<FakeLink>();
  auto* l = link.get();
  l->fail_registrations = 4;
  l->queue.push_back(plan(1));
  Options o = options();
  o.retry_min_s = 0.001;
  o.retry_max_s = 0.004;
  Worker w(o, std::move(link), std::make_unique<FakeRunner>());
  w.run();
  EXPECT_EQ(l->fail_registrations, 0);
  EXPECT_EQ(l->registrations, 1);
  EXPECT_EQ(l->reports.size(), 1u);
}

// The waits: each between half and all of its bound, the bound doubling from the least to the most and staying there;
// two workers' waits differ.
TEST(WorkerLoop, BackoffGrowsBoundedAndJittered) {
  Backoff a(0.5, 30, 1), b(0.5, 30, 2);
  double bound = 0.5;
  bool differ = false;
  for (int i = 0; i < 12; ++i) {
    const double x = a.next(), y = b.next();
    EXPECT_GE(x, bound / 2) << i;
    EXPECT_LE(x, bound) << i;
    differ |= x != y;
    bound = std::min(bound * 2, 30.0);
  }
  EXPECT_TRUE(differ);
  EXPECT_GE(a.next(), 15);  // at the most
}

// A screen's cutoff uses the best the worker knows when it measures: the coordinator's at the lease, lowered by the
// worker's own results for the job since (not by a result that was itself cut off, nor another job's).
TEST(WorkerLoop, AScreensCutoffMeetsTheBestKnownWhenItIsMeasured) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  r->ms = 10;
  const double lease_best[] = {0, 50, 40, 0.5, 0};
  for (int i = 1; i <= 4; ++i) {
    l->queue.push_back(plan(i));
    l->queue.back().job = i == 4 ? 8 : 7;
    l->queue.back().cutoff_on = "decode";  // the fake's decode figure: the plan's id
    l->queue.back().cutoff_factor = 1.5;
    l->queue.back().best_ms->store(lease_best[i]);
  }
  Options o = options();
  o.prefetch = 1;  // leased one at a time, each after the one before was measured
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  ASSERT_EQ(l->reports.size(), 4u);
  EXPECT_DOUBLE_EQ(r->best_seen[1], 50);   // the coordinator's
  EXPECT_DOUBLE_EQ(r->best_seen[2], 1);    // plan 1's result, below the lease's 40
  EXPECT_DOUBLE_EQ(r->best_seen[3], 0.5);  // the lease's, below the worker's
  EXPECT_DOUBLE_EQ(r->best_seen[4], 0);    // another job: nothing known
}

// A plan whose lease was lost while it waited is never measured, and a worker the coordinator forgot registers again.
// Plan 1 is measured until a heartbeat has said plan 2's lease was lost twice: the second comes after the worker took
// the first in.
TEST(WorkerLoop, SkipsPlansWhoseLeaseWasLostAndRegistersAgain) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  l->queue = {plan(1), plan(2), plan(3)};
  l->lost.insert(plan(2).lease);
  l->forget_worker = true;
  int told_lost = 0;  // heartbeats that said plan 2's lease was lost, under r->m
  l->on_heartbeat = [r, &told_lost](const std::vector<int64_t>& lost) {
    r->note([&] { told_lost += std::count(lost.begin(), lost.end(), plan(2).lease) > 0; });
  };
  r->prepare_after = [r](int64_t id) { return id != 2 || r->measured_start.count(1) > 0; };
  r->measure_after = [&told_lost](int64_t id) { return id != 1 || told_lost >= 2; };
  Worker w(options(), std::move(link), std::move(runner));
  w.run();
  EXPECT_EQ(r->ran_out, "");
  std::set<int64_t> got;
  for (auto& [id, res] : l->reports) got.insert(id);
  EXPECT_EQ(got, (std::set<int64_t>{1, 3}));
  EXPECT_EQ(r->measured_start.count(2), 0u) << "plan 2 was measured after its lease was lost";
  EXPECT_EQ(l->registrations, 2);
}

TEST(WorkerLoop, StopsMeasuringWhenTheLeaseIsLost) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  runner->ms = 20000;
  l->queue = {plan(1)};
  l->lost.insert(plan(1).lease);  // the job was cancelled: the next heartbeat says so
  Worker w(options(), std::move(link), std::move(runner));
  auto start = Clock::now();
  w.run();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(l->reports.empty());
}

}  // namespace
}  // namespace lt::worker
