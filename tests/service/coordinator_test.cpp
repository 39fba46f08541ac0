// The coordinator's core: leases and their expiry, idempotent results, each strategy, cancel, budgets, reuse; the
// searches replenished inline (Options::replenish_inline) as the server's thread would.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "coordinator/core.hpp"
#include "db/sqlite.hpp"
#include "fake_compiler.hpp"
#include "support/test_support.hpp"

namespace lt::coord {
namespace {

// A coordinator on a fresh database, with a clock the test moves.
struct Fixture {
  test::TempDir dir;
  double clock = 1000;
  std::filesystem::path checkpoint = dir / "model.gguf";
  std::unique_ptr<Coordinator> core;

  explicit Fixture(int points = 6, Options o = {}) {
    std::ofstream(checkpoint) << "GGUF and some bytes";
    open(points, o);
  }
  void open(int points, Options o = {}) {
    o.data_dir = dir / "data";
    o.path_roots = {dir.path()};  // jobs name their checkpoints by path here
    o.replenish_inline = true;
    core.reset();
    core = std::make_unique<Coordinator>(dir / "lt.db", o, std::make_unique<test::FakeCompiler>(points),
                                         [this] { return clock; });
  }
  int64_t worker(const std::string& gpu = "h100", const std::string& env = "env-a") {
    db::Worker w;
    w.name = "w-" + gpu + "-" + env;
    w.gpu = gpu;
    w.environment_key = env;
    return core->register_worker(w);
  }
  JobStatus submit(const std::string& strategy = "grid", uint32_t budget = 0,
                   std::vector<std::string> gpus = {"h100"}) {
    JobSpec s;
    s.path = checkpoint.string();
    s.gpus = std::move(gpus);
    s.strategy = strategy;
    s.budget = budget;
    return core->submit(s);
  }
  // A valid result whose time is the configuration's id + 1 (so id 0 is fastest), unless `ms` says otherwise;
  // verified when the plan asked for the full checks.
  bool report(int64_t w, const Lease& l, double ms = -1) {
    db::Run r;
    r.valid = true;
    r.verified = l.plan.verify;
    r.median_ms = ms >= 0 ? ms : nlohmann::json::parse(l.plan.knobs)["id"].get<int>() + 1.0;
    return core->report(w, l.plan.id, l.plan.lease, r);
  }
  // Leases and reports until nothing is left; returns the plans run.
  int drain(int64_t w) {
    int n = 0;
    for (;;) {
      auto ls = core->lease(w, 4);
      if (ls.empty()) return n;
      for (auto& l : ls) report(w, l), ++n;
    }
  }
};

TEST(Coordinator, GridPlansEveryPointPerGpuKind) {
  Fixture f(5);
  auto s = f.submit("grid", 0, {"h100", "a100"});
  ASSERT_EQ(s.gpus.size(), 2u);
  for (auto& g : s.gpus) EXPECT_EQ(g.planned, 5u);
  EXPECT_EQ(f.drain(f.worker("h100")), 5);
  EXPECT_EQ(f.core->status(s.job.id).job.state, "running");
  EXPECT_EQ(f.drain(f.worker("a100")), 5);
  auto done = f.core->status(s.job.id);
  EXPECT_EQ(done.job.state, "done");
  for (auto& g : done.gpus) {
    EXPECT_EQ(g.valid, 5u);
    EXPECT_DOUBLE_EQ(g.best_ms, 1.0);
  }
}

TEST(Coordinator, LeaseGoesOnlyToWorkersOfTheKind) {
  Fixture f(3);
  f.submit("grid", 0, {"h100"});
  EXPECT_TRUE(f.core->lease(f.worker("a100"), 4).empty());
  EXPECT_EQ(f.core->lease(f.worker("h100"), 2).size(), 2u);
}

TEST(Coordinator, ExpiredLeaseIsRequeuedAndHeartbeatsKeepIt) {
  Fixture f(2);
  f.submit();
  int64_t a = f.worker(), b = f.worker();
  auto la = f.core->lease(a, 1);
  ASSERT_EQ(la.size(), 1u);
  f.clock += f.core->options().lease_s * 0.8;
  EXPECT_TRUE(f.core->heartbeat(a, {la[0].plan.lease}).empty());
  f.clock += f.core->options().lease_s * 0.8;  // past the first deadline, within the extended one
  auto lb = f.core->lease(b, 4);
  ASSERT_EQ(lb.size(), 1u);
  EXPECT_NE(lb[0].plan.id, la[0].plan.id);
  f.clock += f.core->options().lease_s * 2;  // a dies: its lease expires and goes to b
  auto again = f.core->lease(b, 4);
  ASSERT_EQ(again.size(), 2u);                                     // a's plan and b's own expired one
  EXPECT_FALSE(f.core->heartbeat(a, {la[0].plan.lease}).empty());  // a is told it lost the lease
}

// A plan whose lease is lost max_attempts times is given up (skipped), not leased forever: its job ends once nothing
// else is open (tick() requeues and completes without a lease call), with no best, and the last holder's late result
// is refused.
TEST(Coordinator, APlanLostMaxAttemptsTimesIsGivenUp) {
  Fixture f(1);
  auto s = f.submit();
  const int64_t w = f.worker();
  const int attempts = f.core->options().max_attempts;
  ASSERT_EQ(attempts, 3);
  Lease last;
  for (int i = 0; i < attempts; ++i) {
    auto ls = f.core->lease(w, 4);
    ASSERT_EQ(ls.size(), 1u) << "lease " << i;
    last = ls[0];
    f.clock += f.core->options().lease_s * 2;  // the worker dies holding it
    f.core->tick();
    EXPECT_EQ(f.core->status(s.job.id).job.state, i + 1 < attempts ? "running" : "done") << "after loss " << i + 1;
  }
  EXPECT_TRUE(f.core->lease(w, 4).empty());
  EXPECT_TRUE(f.core->best(s.job.id, "").empty());
  EXPECT_THROW(f.report(w, last), FailedPrecondition);
}

// Under successive halving a screen lost max_attempts times is given up (skipped) while the rest of its round is
// reported; the round then ends without it, and the best ceil(9 / 3) of the others go on: id 0, the fastest, given
// up, ids 1, 2 and 3 are promoted and the last round verifies id 1.
TEST(Coordinator, HalvingPromotesTheRestOfARoundWhoseScreenWasGivenUp) {
  Fixture f(9);
  auto s = f.submit("halving");
  const int64_t w = f.worker();
  const auto id_of = [](const Lease& l) { return nlohmann::json::parse(l.plan.knobs)["id"].get<int>(); };
  Lease lost;
  for (int loss = 1; loss <= f.core->options().max_attempts; ++loss) {
    bool held = false;
    for (auto ls = f.core->lease(w, 1); !ls.empty(); ls = f.core->lease(w, 1)) {
      ASSERT_EQ(ls[0].plan.stage, 0u) << "the next round began with a screen open, at loss " << loss;
      if (id_of(ls[0]) == 0) {  // the fastest screen, held and lost; the round's others reported
        ASSERT_FALSE(held);
        held = true;
        lost = ls[0];
      } else {
        f.report(w, ls[0]);
      }
    }
    ASSERT_TRUE(held) << "id 0 was not leased again before loss " << loss;
    EXPECT_EQ(lost.plan.attempts, loss - 1);
    f.clock += f.core->options().lease_s * 2;  // its holder dies
    f.core->tick();
  }
  EXPECT_EQ(f.drain(w), 3 + 1);  // the second and third rounds; id 0 never leased again
  EXPECT_THROW(f.report(w, lost), FailedPrecondition);
  std::map<uint32_t, std::set<int>> by_stage;
  for (auto& r : f.core->results(s.job.id, "h100", 0))
    by_stage[r.stage].insert(nlohmann::json::parse(r.knobs)["id"].get<int>());
  EXPECT_EQ(by_stage[0], (std::set<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(by_stage[1], (std::set<int>{1, 2, 3}));
  EXPECT_EQ(by_stage[2], (std::set<int>{1}));
  auto best = f.core->best(s.job.id, "h100");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].knobs, R"({"id":1})");
  EXPECT_TRUE(best[0].verified);
  auto st = f.core->status(s.job.id);
  EXPECT_EQ(st.job.state, "done");
  EXPECT_EQ(st.gpus[0].done, 8u + 3u + 1u);
  EXPECT_EQ(st.gpus[0].open, 0u);
}

TEST(Coordinator, ResultIsRecordedOnceHoweverOftenItArrives) {
  Fixture f(1);
  auto s = f.submit();
  int64_t a = f.worker(), b = f.worker();
  auto la = f.core->lease(a, 1);
  f.clock += 1000;
  auto lb = f.core->lease(b, 1);  // re-queued to b after a's lease expired
  ASSERT_EQ(lb.size(), 1u);
  EXPECT_THROW(f.report(a, la[0], 5), PermissionDenied);  // a's lease is gone: b holds the plan now
  EXPECT_TRUE(f.report(b, lb[0], 7));
  EXPECT_FALSE(f.report(b, lb[0], 7));  // the same result again: a duplicate, ignored
  EXPECT_FALSE(f.report(a, la[0], 5));  // and after it was recorded, whoever sends it
  auto runs = f.core->results(s.job.id, "", 0);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_DOUBLE_EQ(runs[0].median_ms, 7);
  EXPECT_EQ(f.core->status(s.job.id).job.state, "done");
}

// A result is taken only from the worker that holds the plan's live lease, for the plan's GPU kind: a forged result
// (another worker, another lease, another kind, a plan never leased or of an ended job) changes nothing.
TEST(Coordinator, AResultIsTakenOnlyFromTheLeaseHolder) {
  Fixture f(3);
  auto s = f.submit();
  int64_t a = f.worker(), other = f.worker("h100", "env-b"), a100 = f.worker("a100");
  auto la = f.core->lease(a, 1);
  ASSERT_EQ(la.size(), 1u);
  Lease forged = la[0];
  EXPECT_THROW(f.report(other, forged, 0.0001), PermissionDenied);  // another worker of the kind
  EXPECT_THROW(f.report(a100, forged, 0.0001), PermissionDenied);   // a worker of another kind
  forged.plan.lease += 1000;
  EXPECT_THROW(f.report(a, forged, 0.0001), PermissionDenied);  // the holder, under a lease that is not the plan's
  auto pending = f.core->lease(other, 1);  // the second plan, leased to `other`
  ASSERT_EQ(pending.size(), 1u);
  auto third = pending[0];
  third.plan.id = pending[0].plan.id + 1;  // the third plan, never leased
  EXPECT_THROW(f.report(other, third, 0.0001), FailedPrecondition);
  EXPECT_TRUE(f.core->results(s.job.id, "", 0).empty());
  f.core->cancel(s.job.id);
  EXPECT_THROW(f.report(a, la[0], 1), FailedPrecondition);  // its job was cancelled: the plan is skipped
  EXPECT_TRUE(f.core->results(s.job.id, "", 0).empty());
  EXPECT_TRUE(f.core->best(s.job.id, "h100").empty());
}

// What a refused call says: its kind and message ("taken" when it was not refused).
template <class Call>
std::string refusal(Call&& call) {
  try {
    call();
    return "taken";
  } catch (const InvalidArgument& e) {
    return std::string("InvalidArgument: ") + e.what();
  } catch (const NotFound& e) {
    return std::string("NotFound: ") + e.what();
  } catch (const FailedPrecondition& e) {
    return std::string("FailedPrecondition: ") + e.what();
  } catch (const PermissionDenied& e) {
    return std::string("PermissionDenied: ") + e.what();
  }
}

// report()'s own checks, each refusal with its reason: a result that is not well formed (timings negative or not
// finite, checks not finite, a valid result naming a failure, an invalid one not saying why, profile, environment or
// cost not JSON), an unknown worker or plan, a worker measuring another GPU kind than the plan's. None records
// anything or costs the holder its lease: its well-formed result is taken after them, its empty JSON read as {}.
TEST(Coordinator, AResultThatIsNotWellFormedIsRefusedAndThePlanStaysLeased) {
  Fixture f(1);
  auto s = f.submit();
  const int64_t w = f.worker();
  auto ls = f.core->lease(w, 1);
  ASSERT_EQ(ls.size(), 1u);
  const db::Plan& p = ls[0].plan;
  const auto report = [&](const db::Run& r, int64_t worker = 0, int64_t plan = 0) {
    return refusal([&] { f.core->report(worker ? worker : w, plan ? plan : p.id, p.lease, r); });
  };
  db::Run good;
  good.valid = true;
  good.median_ms = 2;
  const double inf = std::numeric_limits<double>::infinity();
  for (double db::Run::*timing :
       {&db::Run::median_ms, &db::Run::spread_ms, &db::Run::min_ms, &db::Run::max_ms, &db::Run::prefill_ms,
        &db::Run::tok_per_s, &db::Run::compile_s, &db::Run::workload_ms})
    for (double bad : {-1.0, inf, std::nan("")}) {
      db::Run r = good;
      r.*timing = bad;
      EXPECT_EQ(report(r), "InvalidArgument: a result's timings must be finite and not negative") << bad;
    }
  for (double db::Run::*check : {&db::Run::rel_l2, &db::Run::argmax_agree})
    for (double bad : {inf, std::nan("")}) {
      db::Run r = good;
      r.*check = bad;
      EXPECT_EQ(report(r), "InvalidArgument: a result's checks must be finite numbers") << bad;
    }
  db::Run named = good;
  named.failure = "race";
  EXPECT_EQ(report(named), "InvalidArgument: a valid result names no failure");
  db::Run mute = good;
  mute.valid = false;
  mute.failure = "race";
  EXPECT_EQ(report(mute), "InvalidArgument: an invalid result says why");
  for (std::string db::Run::*json : {&db::Run::profile, &db::Run::environment, &db::Run::cost}) {
    db::Run r = good;
    r.*json = "{\"launches\": ";
    EXPECT_EQ(report(r), "InvalidArgument: a result's profile, environment and cost are JSON");
  }
  EXPECT_EQ(report(good, w + 100), "NotFound: no worker " + std::to_string(w + 100) + " (register again)");
  EXPECT_EQ(report(good, w, p.id + 100), "NotFound: no plan " + std::to_string(p.id + 100));
  {
    // The worker's GPU kind changed under it (the database edited by hand): the plan's kind is not its.
    db::Connection c(f.dir / "lt.db");
    c.prepare("UPDATE workers SET gpu = 'a100' WHERE id = ?1").bind(1, w).exec();
    EXPECT_EQ(report(good), "PermissionDenied: worker " + std::to_string(w) + " measures a100, not h100");
    c.prepare("UPDATE workers SET gpu = 'h100' WHERE id = ?1").bind(1, w).exec();
  }
  EXPECT_TRUE(f.core->results(s.job.id, "", 0).empty());
  EXPECT_EQ(f.core->status(s.job.id).gpus[0].open, 1u);
  EXPECT_TRUE(f.core->heartbeat(w, {p.lease}).empty());  // the lease held all along
  EXPECT_EQ(report(good), "taken");
  auto runs = f.core->results(s.job.id, "", 0);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_DOUBLE_EQ(runs[0].median_ms, 2);
  EXPECT_EQ(runs[0].profile, "{}");
  EXPECT_EQ(runs[0].environment, "{}");
  EXPECT_EQ(runs[0].cost, "{}");
  EXPECT_EQ(f.core->status(s.job.id).job.state, "done");
}

// A result for a plan whose job ended while it was leased (its time budget spent) is refused, naming the job's state.
TEST(Coordinator, AResultForAJobThatEndedIsRefused) {
  Fixture f(3);
  JobSpec spec;
  spec.path = f.checkpoint.string();
  spec.gpus = {"h100"};
  spec.time_budget_s = 60;
  auto s = f.core->submit(spec);
  const int64_t w = f.worker();
  auto ls = f.core->lease(w, 1);
  ASSERT_EQ(ls.size(), 1u);
  for (int i = 0; i < 3; ++i) {  // the lease kept alive past the budget's end
    f.clock += 21;
    ASSERT_TRUE(f.core->heartbeat(w, {ls[0].plan.lease}).empty());
  }
  f.core->tick();
  ASSERT_EQ(f.core->status(s.job.id).job.state, "done");
  db::Run r;
  r.valid = true;
  r.median_ms = 1;
  EXPECT_EQ(refusal([&] { f.core->report(w, ls[0].plan.id, ls[0].plan.lease, r); }),
            "FailedPrecondition: job " + std::to_string(s.job.id) + " is done: plan " + std::to_string(ls[0].plan.id) +
                "'s result is not taken");
  EXPECT_TRUE(f.core->results(s.job.id, "", 0).empty());
}

TEST(Coordinator, RandomDrawsTheBudgetDeterministically) {
  Fixture f(50);
  auto s1 = f.submit("random", 7);
  EXPECT_EQ(s1.gpus[0].planned, 7u);
  auto s2 = f.submit("random", 7);
  auto w = f.worker();
  f.drain(w);
  std::set<std::string> k1, k2;
  for (auto& r : f.core->results(s1.job.id, "", 0)) k1.insert(r.knobs);
  for (auto& r : f.core->results(s2.job.id, "", 0)) k2.insert(r.knobs);
  EXPECT_EQ(k1.size(), 7u);
  EXPECT_EQ(k1, k2);
}

TEST(Coordinator, SuccessiveHalvingPromotesTheFastestToLongerRunsAndVerifiesTheLastRound) {
  Fixture f(9);
  auto s = f.submit("halving");
  EXPECT_EQ(s.gpus[0].planned, 9u + 3u + 1u);
  auto w = f.worker();
  EXPECT_EQ(f.drain(w), 9 + 3 + 1);
  auto runs = f.core->results(s.job.id, "h100", 0);
  std::map<uint32_t, std::set<std::string>> by_stage;
  std::map<uint32_t, uint32_t> reps;
  std::map<uint32_t, std::set<bool>> verified;
  for (auto& r : runs) {
    by_stage[r.stage].insert(r.knobs);
    reps[r.stage] = r.repetitions;
    verified[r.stage].insert(r.verified);
  }
  EXPECT_EQ(by_stage[1], (std::set<std::string>{R"({"id":0})", R"({"id":1})", R"({"id":2})"}));
  EXPECT_EQ(by_stage[2], (std::set<std::string>{R"({"id":0})"}));
  EXPECT_EQ(reps[0] * 3, reps[1]);
  EXPECT_EQ(reps[1] * 3, reps[2]);
  // The early rounds are screened, the last verified: only it can be best.
  EXPECT_EQ(verified[0], std::set<bool>{false});
  EXPECT_EQ(verified[1], std::set<bool>{false});
  EXPECT_EQ(verified[2], std::set<bool>{true});
  auto best = f.core->best(s.job.id, "h100");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].stage, 2u);
  EXPECT_TRUE(best[0].verified);
  auto st = f.core->status(s.job.id);
  EXPECT_EQ(st.job.state, "done");
  EXPECT_EQ(st.gpus[0].measured, 13u);
  EXPECT_EQ(st.gpus[0].verified, 1u);
}

// A screen's lease carries its cutoff: the job's objective, the factor and the best objective of the job's valid runs
// on the GPU kind so far; a verification's carries none, nor does any lease with the cutoff turned off.
TEST(Coordinator, AScreensLeaseCarriesTheJobsBestForItsCutoff) {
  Fixture f(9);
  auto s = f.submit("halving");
  auto w = f.worker();
  auto first = f.core->lease(w, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_FALSE(first[0].plan.verify);
  EXPECT_EQ(first[0].cutoff_on, "workload");
  EXPECT_DOUBLE_EQ(first[0].cutoff_factor, Options{}.cutoff_factor);
  EXPECT_DOUBLE_EQ(first[0].best_ms, 0);  // nothing measured yet
  f.report(w, first[0], 2);
  auto second = f.core->lease(w, 1);
  ASSERT_EQ(second.size(), 1u);
  const auto runs = f.core->results(s.job.id, "h100", 0);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_GT(runs[0].objective_ms, 0);
  EXPECT_DOUBLE_EQ(second[0].best_ms, runs[0].objective_ms);
  for (int n = 0; n < 100; ++n) {  // on to the last round's verification
    auto ls = f.core->lease(w, 1);
    if (ls.empty()) break;
    if (ls[0].plan.verify) {
      EXPECT_TRUE(ls[0].cutoff_on.empty());
      break;
    }
    f.report(w, ls[0]);
  }
  Options off;
  off.cutoff_factor = 0;
  Fixture g(9, off);
  g.submit("halving");
  auto gw = g.worker();
  EXPECT_TRUE(g.core->lease(gw, 1)[0].cutoff_on.empty());
}

// A job names a checkpoint by path only under the folders the coordinator was started with (links and `..`
// resolved first; whether a file exists elsewhere is never said); with none, uploads only.
TEST(Coordinator, PathsAreReadOnlyUnderTheAllowedFolders) {
  Fixture f(2);
  test::TempDir outside;
  std::ofstream(outside / "m.gguf") << "GGUF and some bytes";
  std::filesystem::create_symlink(outside / "m.gguf", f.dir / "link.gguf");
  JobSpec s;
  s.gpus = {"h100"};
  for (const auto& p : {outside / "m.gguf", f.dir / "link.gguf", f.dir / ".." / outside.path().filename() / "m.gguf",
                        outside / "missing.gguf"}) {
    s.path = p.string();
    try {
      f.core->submit(s);
      ADD_FAILURE() << p;
    } catch (const PermissionDenied& e) {
      EXPECT_EQ(std::string(e.what()).find("missing"), std::string::npos) << e.what();
    }
  }
  s.path = f.checkpoint.string();
  EXPECT_NO_THROW(f.core->submit(s));
  test::TempDir bare;
  Options o;
  o.data_dir = bare / "data";  // (no path_roots)
  Coordinator uploads_only(bare / "lt.db", o, std::make_unique<test::FakeCompiler>(2));
  EXPECT_THROW(uploads_only.submit(s), FailedPrecondition);
}

TEST(Coordinator, InvalidResultsAreNeverBest) {
  Fixture f(2);
  auto s = f.submit();
  auto w = f.worker();
  auto ls = f.core->lease(w, 2);
  db::Run bad;
  bad.median_ms = 0.1;
  bad.valid = false;
  bad.reason = "logits differ under --stagger";
  bad.failure = "race";
  f.core->report(w, ls[0].plan.id, ls[0].plan.lease, bad);
  f.report(w, ls[1], 3);
  auto best = f.core->best(s.job.id, "");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_DOUBLE_EQ(best[0].median_ms, 3);
  EXPECT_EQ(f.core->status(s.job.id).gpus[0].failed, 1u);
}

TEST(Coordinator, CancelStopsTheJobAndKeepsTheBestSoFar) {
  Fixture f(6);
  auto s = f.submit();
  auto w = f.worker();
  auto ls = f.core->lease(w, 2);
  f.report(w, ls[0]);
  auto c = f.core->cancel(s.job.id);
  EXPECT_EQ(c.job.state, "cancelled");
  EXPECT_TRUE(f.core->lease(w, 4).empty());
  EXPECT_FALSE(f.core->heartbeat(w, {ls[1].plan.lease}).empty());
  EXPECT_EQ(f.core->best(s.job.id, "").size(), 1u);
}

// At most max_running_jobs jobs run at once: a submit past it is refused with nothing stored, and taken again once a
// job has ended.
TEST(Coordinator, JobsRunningAtOnceAreBounded) {
  Options o;
  o.max_running_jobs = 2;
  Fixture f(3, o);
  auto a = f.submit();
  f.submit();
  EXPECT_THROW(f.submit(), ResourceExhausted);
  EXPECT_EQ(f.core->list().size(), 2u);
  f.core->cancel(a.job.id);
  auto c = f.submit();
  EXPECT_EQ(c.job.state, "running");
  EXPECT_EQ(f.core->list().size(), 3u);
}

TEST(Coordinator, TimeBudgetEndsTheJob) {
  Fixture f(6);
  JobSpec spec;
  spec.path = f.checkpoint.string();
  spec.gpus = {"h100"};
  spec.time_budget_s = 60;
  auto s = f.core->submit(spec);
  EXPECT_NEAR(s.time_left_s, 60, 1e-6);
  auto w = f.worker();
  f.report(w, f.core->lease(w, 1)[0]);
  f.clock += 61;
  EXPECT_TRUE(f.core->lease(w, 4).empty());
  auto st = f.core->status(s.job.id);
  EXPECT_EQ(st.job.state, "done");
  EXPECT_EQ(st.gpus[0].done, 1u);
}

TEST(Coordinator, SameCheckpointReusesResultsOnlyUnderTheSameEnvironment) {
  Fixture f(4);
  auto first = f.submit();
  f.drain(f.worker("h100", "env-a"));
  auto again = f.submit();
  EXPECT_TRUE(f.core->lease(f.worker("h100", "env-a"), 4).empty());  // every result reused
  auto st = f.core->status(again.job.id);
  EXPECT_EQ(st.job.state, "done");
  EXPECT_EQ(st.gpus[0].valid, 4u);
  for (auto& r : f.core->results(again.job.id, "", 0)) EXPECT_NE(r.reused_from, 0);
  auto third = f.submit();
  EXPECT_EQ(f.core->lease(f.worker("h100", "env-b"), 4).size(), 4u);  // another environment measures anew
  (void)first;
  (void)third;
}

// A stored row that cannot be read is an error for what it belongs to, not for the lease call: a job whose prompts
// are corrupt fails (its plans stopped, none leased), a configuration whose knobs are corrupt fails its plan (a
// bad_plan run saying why), and the other plans are leased as usual. Every lease taken is in the reply.
TEST(Coordinator, AMalformedRowFailsItsPlanOrItsJobNotTheLease) {
  Fixture f(4);
  const int64_t broken_job = f.submit().job.id, job = f.submit().job.id;
  int64_t broken_plan = 0;
  f.core->with_store([&](db::Store& st, double) {
    st.connection()
        .prepare("UPDATE jobs SET prompts = '[{\"n_gen\": 8, \"tokens\": ' WHERE id = ?1")
        .bind(1, broken_job)
        .exec();
    broken_plan = st.plans(job, "h100").front().id;
    st.connection()
        .prepare("UPDATE configurations SET knobs = '{\"id\": ' WHERE id = ?1")
        .bind(1, st.plans(job, "h100").front().config)
        .exec();
  });
  const int64_t w = f.worker();
  auto leases = f.core->lease(w, 8);
  ASSERT_EQ(leases.size(), 3u);
  for (auto& l : leases) {
    EXPECT_EQ(l.plan.job, job);
    EXPECT_NE(l.plan.id, broken_plan);
    EXPECT_EQ(l.prompts.size(), 4u);
  }
  const auto failed = f.core->status(broken_job).job;
  EXPECT_EQ(failed.state, "failed");
  EXPECT_NE(failed.message.find("prompts"), std::string::npos) << failed.message;
  const auto runs = f.core->results(job, "", 0);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].plan, broken_plan);
  EXPECT_EQ(runs[0].failure, kBadPlan);
  EXPECT_NE(runs[0].reason.find("knobs are not JSON"), std::string::npos) << runs[0].reason;
  f.core->with_store([&](db::Store& st, double) {
    auto leased = st.connection().prepare("SELECT COUNT(*) FROM plans WHERE state = 'leased'");
    leased.next();
    EXPECT_EQ(leased.i64(0), 3);  // the leases in the reply, and no other
    leased.exec();
  });
  for (auto& l : leases) f.report(w, l);
  EXPECT_EQ(f.core->status(job).job.state, "done");
  EXPECT_EQ(f.core->status(job).gpus[0].failed, 1u);
  EXPECT_TRUE(f.core->best(job, "").size() == 1);
}

TEST(Coordinator, BadRequestsChangeNothing) {
  Fixture f(3);
  JobSpec s;
  s.path = f.checkpoint.string();
  s.gpus = {"h100", "z999"};
  EXPECT_THROW(f.core->submit(s), InvalidArgument);
  s.gpus = {"h100"};
  s.strategy = "annealing";
  EXPECT_THROW(f.core->submit(s), InvalidArgument);
  s.strategy = "grid";
  s.objective = "throughput";
  EXPECT_THROW(f.core->submit(s), InvalidArgument);
  s.objective = "decode";
  s.workload = Workload{0, 128};
  EXPECT_THROW(f.core->submit(s), InvalidArgument);
  s.workload = Workload{4000, 200};  // past the lane's 4096 positions
  try {
    f.core->submit(s);
    ADD_FAILURE() << "a workload past the context is refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the lane's context of 4096"), std::string::npos) << e.what();
  }
  s.workload.reset();
  s.path = "relative.gguf";
  EXPECT_THROW(f.core->submit(s), InvalidArgument);
  std::ofstream(f.dir / "junk.gguf") << "not a checkpoint";
  s.path = (f.dir / "junk.gguf").string();
  EXPECT_THROW(f.core->submit(s), InvalidArgument);
  s.path.clear();
  s.digest = "0123";
  EXPECT_THROW(f.core->submit(s), InvalidArgument);
  s.digest = std::string(32, 'a');
  EXPECT_THROW(f.core->submit(s), NotFound);
  EXPECT_THROW(f.core->results(1, "z999", 0), InvalidArgument);
  EXPECT_TRUE(f.core->list().empty());
  EXPECT_THROW(f.core->status(1), NotFound);
  EXPECT_THROW(f.core->lease(99, 1), NotFound);
  auto job = f.submit();
  auto w = f.worker();
  auto l = f.core->lease(w, 1);
  db::Run nan;
  nan.median_ms = std::nan("");
  nan.valid = true;
  EXPECT_THROW(f.core->report(w, l[0].plan.id, l[0].plan.lease, nan), InvalidArgument);
  EXPECT_TRUE(f.core->results(job.job.id, "", 0).empty());
}

TEST(Coordinator, RestartCarriesOn) {
  Fixture f(4);
  auto s = f.submit("halving");
  auto w = f.worker();
  auto ls = f.core->lease(w, 3);
  ASSERT_EQ(ls.size(), 3u);
  f.report(w, ls[0]);
  f.open(4);  // the coordinator restarts on the same database
  // The leases' deadlines come back with it: half a lease later one from before the restart still reports...
  f.clock += f.core->options().lease_s * 0.5;
  EXPECT_TRUE(f.report(w, ls[1]));
  EXPECT_FALSE(f.report(w, ls[0]));  // (recorded once)
  // ...and past its deadline the third is lost: its late result refused, its plan leased again.
  f.clock += f.core->options().lease_s;
  f.core->tick();
  EXPECT_THROW(f.report(w, ls[2]), FailedPrecondition);
  auto again = f.core->lease(w, 4);
  ASSERT_FALSE(again.empty());
  EXPECT_EQ(again[0].plan.id, ls[2].plan.id);
  for (auto& l : again) f.report(w, l);
  f.drain(w);
  auto st = f.core->status(s.job.id);
  EXPECT_EQ(st.job.state, "done");
  EXPECT_EQ(f.core->results(s.job.id, "", 0).size(), 4u + 2u + 1u);  // rounds of 4, 2, 1
}

// tick() on its own, with no lease or report to do it on the way: a lease past its deadline is taken back (its
// holder's heartbeat is told so, the plan pending again), a job past its time budget ends with its pending plans
// skipped while the others run on, and every tick wakes the replenisher.
TEST(Coordinator, TickAloneTakesBackExpiredLeasesAndEndsJobsPastTheirBudget) {
  Fixture f(3);
  int wakes = 0;
  f.core->on_wanted([&] { ++wakes; });
  auto open = f.submit();
  JobSpec spec;
  spec.path = f.checkpoint.string();
  spec.gpus = {"h100"};
  spec.time_budget_s = 4 * f.core->options().lease_s;
  auto timed = f.core->submit(spec);
  const int64_t a = f.worker(), b = f.worker("h100", "env-b");
  auto held = f.core->lease(a, 1);
  ASSERT_EQ(held.size(), 1u);
  ASSERT_EQ(held[0].plan.job, open.job.id);
  f.clock += f.core->options().lease_s * 0.5;
  f.core->tick();  // within the lease: nothing changes
  EXPECT_TRUE(f.core->heartbeat(a, {held[0].plan.lease}).empty());
  f.clock += f.core->options().lease_s * 1.5;  // a dies: past the extended deadline
  f.core->tick();
  EXPECT_EQ(f.core->heartbeat(a, {held[0].plan.lease}), std::vector<int64_t>{held[0].plan.lease});
  EXPECT_EQ(f.core->status(open.job.id).gpus[0].open, 3u);
  EXPECT_EQ(f.core->status(timed.job.id).job.state, "running");
  f.clock = timed.job.created_at + spec.time_budget_s + 1;
  f.core->tick();
  auto ended = f.core->status(timed.job.id);
  EXPECT_EQ(ended.job.state, "done");
  EXPECT_EQ(ended.job.message, "time budget reached; the best so far is kept");
  EXPECT_EQ(ended.gpus[0].open, 0u);
  EXPECT_EQ(ended.gpus[0].done, 0u);
  EXPECT_EQ(f.core->status(open.job.id).job.state, "running");
  EXPECT_EQ(wakes, 3);
  // The plan taken back goes to the next worker that asks, one lost lease on its count.
  auto again = f.core->lease(b, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].plan.id, held[0].plan.id);
  EXPECT_EQ(again[0].plan.attempts, 1);
}

TEST(Coordinator, UploadsAreStoredByContent) {
  Fixture f(2);
  Upload u(f.core->upload_dir());
  u.append(0, "GGUF");
  u.append(4, " rest");
  EXPECT_THROW(u.append(3, "x"), InvalidArgument);
  std::string d = f.core->add_checkpoint(u);
  EXPECT_EQ(d.size(), 32u);
  std::ofstream(f.dir / "same.gguf") << "GGUF rest";
  EXPECT_EQ(content_digest(f.dir / "same.gguf"), d);
  JobSpec s;
  s.digest = d;
  s.gpus = {"l4"};
  EXPECT_EQ(f.core->submit(s).job.checkpoint, d);
  Upload bad(f.core->upload_dir());
  EXPECT_THROW(bad.append(0, "nope"), InvalidArgument);  // (the magic: below)
}

// An upload is refused at its first chunk when it is not GGUF, and as soon as it passes the limit; a refused upload,
// and one cut off by a crash (found at the next start), leave nothing on disk.
TEST(Coordinator, UploadsAreBoundedAndLeaveNothingWhenRefused) {
  Fixture f(2);
  const auto parts = [&] {
    size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator(f.core->upload_dir())) n += e.path().extension() == ".part";
    return n;
  };
  {
    Upload u(f.core->upload_dir());
    EXPECT_THROW(u.append(0, "PK\x03\x04 a zip file"), InvalidArgument);
  }
  {
    Upload u(f.core->upload_dir());
    u.append(0, "GG");
    EXPECT_THROW(u.append(2, "XF"), InvalidArgument);  // the magic across two chunks
  }
  {
    Upload u(f.core->upload_dir(), 10);
    u.append(0, "GGUF");
    u.append(4, "123456");
    EXPECT_THROW(u.append(10, "7"), InvalidArgument);  // past 10 bytes
  }
  {
    Upload u(f.core->upload_dir());
    u.append(0, "GG");
    EXPECT_THROW(u.finish(), InvalidArgument);  // shorter than the magic
  }
  EXPECT_EQ(parts(), 0u);
  std::ofstream(f.core->upload_dir() / "upload-123.part") << "GGUF half of it";  // a crash mid-upload
  f.open(2);
  EXPECT_EQ(parts(), 0u);
}

// A checkpoint named by path is read once into the store, as an upload is: the job's checkpoint is that copy (the
// file under the allowed folder may change or go), it is bounded by the upload limit, and a refused submit leaves no
// copy behind.
TEST(Coordinator, APathCheckpointIsReadOnceIntoTheStore) {
  Fixture f(2);
  const auto files = [&] {
    size_t n = 0;
    for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(f.core->upload_dir())) ++n;
    return n;
  };
  const std::string digest = content_digest(f.checkpoint);
  auto s = f.submit();
  EXPECT_EQ(s.job.checkpoint, digest);
  const auto stored = f.core->checkpoint_path(digest);
  EXPECT_EQ(stored, f.core->upload_dir() / (digest + ".gguf"));
  std::ofstream(f.checkpoint) << "GGUF, another file now";
  EXPECT_EQ(content_digest(stored), digest);
  std::filesystem::remove(f.checkpoint);
  EXPECT_EQ(f.drain(f.worker()), 2);  // leased from the copy
  EXPECT_EQ(files(), 1u);

  Options small;
  small.max_upload_bytes = 10;
  f.open(2, small);
  std::ofstream(f.checkpoint) << "GGUF and some more bytes";
  EXPECT_THROW(f.submit(), InvalidArgument);  // past 10 bytes
  f.open(2);
  JobSpec refused;
  refused.path = f.checkpoint.string();
  refused.gpus = {"h100"};
  refused.workload = Workload{9000, 1};  // does not fit the lane's context: refused after the copy was made
  EXPECT_THROW(f.core->submit(refused), InvalidArgument);
  EXPECT_EQ(files(), 1u);  // the first job's copy alone
}

// The workers as the coordinator sees them: busy while they hold leases, idle while they call holding none, gone once
// silent for longer than a lease (listed only when asked); one GPU kind's, or every kind's.
TEST(Coordinator, WorkersAreBusyIdleOrGone) {
  Fixture f(6);
  const int64_t busy = f.worker("h100", "a"), idle = f.worker("h100", "b"), other = f.worker("a100");
  f.submit("grid");
  ASSERT_EQ(f.core->lease(busy, 2).size(), 2u);
  f.clock += 10;
  f.core->heartbeat(idle, {});
  auto all = f.core->workers("", false);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].worker.id, busy);
  EXPECT_EQ(all[0].state, WorkerState::Busy);
  EXPECT_EQ(all[0].leases, 2u);
  EXPECT_DOUBLE_EQ(all[0].seen_ago_s, 10);
  EXPECT_EQ(all[1].state, WorkerState::Idle);
  EXPECT_DOUBLE_EQ(all[1].seen_ago_s, 0);
  EXPECT_EQ(all[2].worker.id, other);
  EXPECT_TRUE(all[2].worker.key_hash.empty());
  ASSERT_EQ(f.core->workers("a100", false).size(), 1u);
  EXPECT_THROW(f.core->workers("H100", false), InvalidArgument);
  EXPECT_THROW(f.core->workers("z999", false), InvalidArgument);

  f.clock += 25;  // busy and other silent for 35 s, past the 30 s lease
  f.core->heartbeat(idle, {});
  auto live = f.core->workers("", false);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].worker.id, idle);
  auto everyone = f.core->workers("", true);
  ASSERT_EQ(everyone.size(), 3u);
  EXPECT_EQ(everyone[0].state, WorkerState::Gone);
  EXPECT_EQ(everyone[2].state, WorkerState::Gone);
  for (auto s : {WorkerState::Busy, WorkerState::Idle, WorkerState::Gone})
    EXPECT_EQ(parse_worker_state(to_string(s)), s);
}

}  // namespace
}  // namespace lt::coord
