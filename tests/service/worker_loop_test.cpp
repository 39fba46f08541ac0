// The worker's loop against a stand-in coordinator: prepares the next plan while measuring the current one, skips
// plans whose lease was lost, retries reports while the coordinator is away, registers again when forgotten.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
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
  int fail_reports = 0;        // the next reports that find the coordinator unavailable
  bool forget_worker = false;  // the next lease finds this worker unknown

  std::pair<int64_t, double> register_worker(const std::string&, const Gpu&) override {
    std::lock_guard l(m);
    ++registrations;
    return {registrations, 0.6};
  }
  std::vector<LeasedPlan> lease(int64_t, uint32_t max) override {
    std::lock_guard l(m);
    if (forget_worker) {
      forget_worker = false;
      throw LinkError("no worker 1 (register again)", false, true);
    }
    std::vector<LeasedPlan> v;
    while (!queue.empty() && v.size() < max) v.push_back(queue.front()), queue.erase(queue.begin());
    return v;
  }
  std::vector<int64_t> heartbeat(int64_t, const std::vector<int64_t>& leases) override {
    std::lock_guard l(m);
    std::vector<int64_t> v;
    for (auto x : leases)
      if (lost.count(x)) v.push_back(x);
    return v;
  }
  bool report(int64_t, const LeasedPlan& p, const Result& r) override {
    std::lock_guard l(m);
    if (fail_reports > 0) {
      --fail_reports;
      throw LinkError("unavailable", true);
    }
    reports.emplace_back(p.plan, r);
    return true;
  }
  void fetch(const std::string&, const std::filesystem::path&) override { FAIL() << "no checkpoint is needed"; }
};

// A runner that records when it prepared and measured each plan; a measurement takes `ms`.
struct FakeRunner : Runner {
  std::mutex m;
  std::condition_variable changed;  // a plan was prepared
  std::map<int64_t, Clock::time_point> prepared, measured_start, measured_end;
  std::map<int64_t, double> best_seen;  // the job's best the plan's cutoff would use, when it was measured
  std::map<int64_t, int> prepare_ms;    // plans whose preparation (kernels building) takes this long
  int ms = 150;
  // With first_waits, the first measurement waits (10 s at most) until another plan, not yet measured, is prepared;
  // `ahead` says whether one was: the worker prepared the next plan while measuring, whatever either takes.
  bool first_waits = false;
  std::optional<bool> ahead;
  bool needs_checkpoint() const override { return false; }
  std::function<Result()> prepare(const LeasedPlan& p, const std::filesystem::path&) override {
    if (prepare_ms.count(p.plan)) std::this_thread::sleep_for(std::chrono::milliseconds(prepare_ms[p.plan]));
    {
      std::lock_guard l(m);
      prepared[p.plan] = Clock::now();
    }
    changed.notify_all();
    return [this, p] {
      {
        std::unique_lock l(m);
        measured_start[p.plan] = Clock::now();
        best_seen[p.plan] = p.best_ms->load();
        if (first_waits && !ahead)
          ahead = changed.wait_for(l, std::chrono::seconds(10), [&] {
            return std::any_of(prepared.begin(), prepared.end(),
                               [&](const auto& x) { return x.first != p.plan && !measured_start.count(x.first); });
          });
      }
      auto end = Clock::now() + std::chrono::milliseconds(ms);
      while (Clock::now() < end && !*p.cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::lock_guard l(m);
      measured_end[p.plan] = Clock::now();
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
  return p;
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

TEST(WorkerLoop, AVerificationGoesAheadOfTheScreensLeasedBeforeIt) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  for (int i = 1; i <= 4; ++i) {
    l->queue.push_back(plan(i));
    l->queue.back().verify = i == 4;  // three screens, then the front's verification
    if (i < 4) runner->prepare_ms[i] = 30;  // (the verification's kernels were built for its screen)
  }
  Options o = options();
  o.prefetch = 4;
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  ASSERT_EQ(l->reports.size(), 4u);
  std::vector<int64_t> order;
  for (auto& [id, res] : l->reports) order.push_back(id);
  const auto at = [&](int64_t id) { return std::find(order.begin(), order.end(), id) - order.begin(); };
  EXPECT_LT(at(4), at(2));
  EXPECT_LT(at(4), at(3));
}

// A plan still building its kernels does not hold the GPU up: the plans prepared behind it are measured first, and
// each result says how long the GPU waited for it.
TEST(WorkerLoop, APlanStillPreparingLetsThePreparedOnesGoFirst) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  r->ms = 20;
  r->prepare_ms[1] = 400;
  for (int i = 1; i <= 3; ++i) l->queue.push_back(plan(i));
  Options o = options();
  o.prefetch = 3;
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  ASSERT_EQ(l->reports.size(), 3u);
  EXPECT_EQ(l->reports.back().first, 1);  // measured last, once built
  for (auto& [id, res] : l->reports) EXPECT_TRUE(res.cost.contains("wait_prepare_s")) << res.cost.dump();
  EXPECT_GT(l->reports.back().second.cost["wait_prepare_s"].get<double>(), 0.2);  // the GPU waited on plan 1's build
}

// A runner whose measurements overlap (the CUDA runner: the GPU's part under its lock, the checks beside the next
// measurement): the next plan's GPU part starts while the one before it is still being checked, and every result is
// reported.
struct OverlappingRunner : FakeRunner {
  std::mutex gpu;
  std::map<int64_t, Clock::time_point> checks_end;
  int verify_checks_ms = 80;
  bool overlaps() const override { return true; }
  std::function<Result()> prepare(const LeasedPlan& p, const std::filesystem::path&) override {
    return [this, p] {
      std::unique_lock g(gpu);
      {
        std::lock_guard l(m);
        measured_start[p.plan] = Clock::now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      g.unlock();
      // The checks; a verification's wait on the CPU reference's verdict, as early in a job.
      std::this_thread::sleep_for(std::chrono::milliseconds(p.verify ? verify_checks_ms : 80));
      std::lock_guard l(m);
      checks_end[p.plan] = Clock::now();
      Result r;
      r.valid = true;
      return r;
    };
  }
};

TEST(WorkerLoop, TheNextMeasurementRunsWhileTheOneBeforeIsChecked) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<OverlappingRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  for (int i = 1; i <= 4; ++i) l->queue.push_back(plan(i));
  Options o = options();
  o.prefetch = 4;
  const auto t0 = Clock::now();
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  ASSERT_EQ(l->reports.size(), 4u);
  std::vector<int64_t> measured;  // plans by the start of their GPU part
  for (auto& [id, at] : r->measured_start) measured.push_back(id);
  std::sort(measured.begin(), measured.end(),
            [&](int64_t a, int64_t b) { return r->measured_start[a] < r->measured_start[b]; });
  std::set<int64_t> reported;
  for (auto& [id, res] : l->reports) reported.insert(id);
  EXPECT_EQ(reported, (std::set<int64_t>{1, 2, 3, 4}));
  for (size_t i = 1; i < 4; ++i)
    EXPECT_LT(r->measured_start[measured[i]], r->checks_end[measured[i - 1]]) << i;
  // 4 x 40 ms on the GPU, the last 80 ms of checks: well under the 480 ms of measuring one after another.
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(420));
}

// A verification whose checks wait long (the CPU reference's verdict) holds up neither the GPU nor the reports of the
// screens measured after it.
TEST(WorkerLoop, AVerificationWaitingOnItsChecksHoldsNothingUp) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<OverlappingRunner>();
  auto* l = link.get();
  auto* r = runner.get();
  r->verify_checks_ms = 600;
  for (int i = 1; i <= 4; ++i) {
    l->queue.push_back(plan(i));
    l->queue.back().verify = i == 1;
    if (i > 1) r->prepare_ms[i] = 50;  // (the verification is measured first)
  }
  Options o = options();
  o.prefetch = 4;
  Worker w(o, std::move(link), std::move(runner));
  w.run();
  ASSERT_EQ(l->reports.size(), 4u);
  EXPECT_EQ(l->reports.back().first, 1);  // reported once its checks are done, after the screens behind it
  for (int i = 2; i <= 4; ++i) EXPECT_LT(r->checks_end[i], r->checks_end[1]) << i;
}

// A checkpoint digest that is not 32 hex digits is never used as a file name: the plan is dropped, nothing fetched.
TEST(WorkerLoop, RefusesADigestThatIsNotOne) {
  struct NeedsCheckpoint : FakeRunner {
    bool needs_checkpoint() const override { return true; }
  };
  auto link = std::make_unique<FakeLink>();
  auto* l = link.get();
  l->queue.push_back(plan(1));
  l->queue.back().checkpoint = "../../../etc/passwd";
  l->queue.back().checkpoint_size = 100;
  Worker w(options(), std::move(link), std::make_unique<NeedsCheckpoint>());
  w.run();  // (FakeLink::fetch fails the test if called)
  EXPECT_TRUE(l->reports.empty());
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

TEST(WorkerLoop, SkipsPlansWhoseLeaseWasLostAndRegistersAgain) {
  auto link = std::make_unique<FakeLink>();
  auto runner = std::make_unique<FakeRunner>();
  auto* l = link.get();
  runner->ms = 1500;  // long enough for a heartbeat while plan 2 waits
  l->queue = {plan(1), plan(2), plan(3)};
  l->lost.insert(plan(2).lease);
  l->forget_worker = true;
  Worker w(options(), std::move(link), std::move(runner));
  w.run();
  std::set<int64_t> got;
  for (auto& [id, res] : l->reports) got.insert(id);
  EXPECT_EQ(got, (std::set<int64_t>{1, 3}));
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
