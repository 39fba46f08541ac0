// The coordinator's core: leases and their expiry, idempotent results, each strategy, cancel, budgets, reuse; the
// searches replenished inline (Options::replenish_inline) as the server's thread would.
#include <gtest/gtest.h>

#include <fstream>

#include "coordinator/core.hpp"
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

}  // namespace
}  // namespace lt::coord
