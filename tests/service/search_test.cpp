// The coordinator's searches: a lazy grid over a huge space, the model strategy's screens and verifications, a restart
// mid-search, warm starts from other jobs, objectives and workloads, leases that carry them.
#include <gtest/gtest.h>

#include <fstream>

#include "coordinator/core.hpp"
#include "fake_compiler.hpp"
#include "support/test_support.hpp"

namespace lt::coord {
namespace {

// How a configuration measures in these tests: decode ms per token and the prompt's prefill ms, by its id.
struct Figures {
  double decode_ms = 1, prefill_ms = 10;
};

// A coordinator on a fresh database with a fake compiler of `points` configurations, a clock the test moves, and
// searches replenished inline.
struct Fixture {
  test::TempDir dir;
  double clock = 1000;
  std::filesystem::path checkpoint = dir / "model.gguf";
  std::unique_ptr<Coordinator> core;
  int points;
  uint32_t context;
  std::function<Figures(int)> figures = [](int id) { return Figures{1.0 + id, 10.0 + id}; };

  explicit Fixture(int points, uint32_t context = 4096) : points(points), context(context) {
    std::ofstream(checkpoint) << "GGUF and some bytes";
    open();
  }
  void open() {
    Options o;
    o.data_dir = dir / "data";
    o.path_roots = {dir.path()};  // jobs name their checkpoints by path here
    o.replenish_inline = true;
    core.reset();
    core = std::make_unique<Coordinator>(dir / "lt.db", o, std::make_unique<test::FakeCompiler>(points, context),
                                         [this] { return clock; });
  }
  int64_t worker(const std::string& env = "env-a") {
    db::Worker w;
    w.name = "w-" + env;
    w.gpu = "h100";
    w.environment_key = env;
    return core->register_worker(w);
  }
  JobSpec spec(const std::string& strategy, uint32_t budget = 0) const {
    JobSpec s;
    s.path = checkpoint.string();
    s.gpus = {"h100"};
    s.strategy = strategy;
    s.budget = budget;
    s.seed = 9;
    return s;
  }
  // Measures the lease as `figures` says: valid, verified when the plan asked for the full checks.
  void report(int64_t w, const Lease& l) {
    auto f = figures(nlohmann::json::parse(l.plan.knobs)["id"].get<int>());
    db::Run r;
    r.valid = true;
    r.verified = l.plan.verify;
    r.median_ms = f.decode_ms;
    r.prefill_ms = f.prefill_ms;
    core->report(w, l.plan.id, l.plan.lease, r);
  }
  // Leases and reports plans one at a time, up to `n` (all there are when n is 0); returns how many.
  int drain(int64_t w, int n = 0) {
    int done = 0;
    while (!n || done < n) {
      auto ls = core->lease(w, 1);
      if (ls.empty()) break;
      report(w, ls[0]);
      ++done;
    }
    return done;
  }
  // The job's plans in the order they were made: (configuration id, stage).
  std::vector<std::pair<int, uint32_t>> plans(int64_t job) {
    std::vector<std::pair<int, uint32_t>> v;
    core->with_store([&](db::Store& st, double) {
      for (auto& p : st.plans(job, "h100")) v.push_back({nlohmann::json::parse(p.knobs)["id"].get<int>(), p.stage});
    });
    return v;
  }
};

// A grid over 2,067,840 points is planned exactly and enumerated lazily: a handful of plans at a time, its cursor
// saved, the next plans after a restart the ones after the last.
TEST(Searches, LazyGridOverAHugeSpace) {
  Fixture f(2067840);
  auto s = f.core->submit(f.spec("grid"));
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].planned, 2067840u);
  EXPECT_LE(f.plans(s.job.id).size(), 16u);
  auto w = f.worker();
  f.drain(w, 20);
  f.open();  // a restart
  f.drain(f.worker(), 20);
  auto plans = f.plans(s.job.id);
  ASSERT_GE(plans.size(), 40u);
  for (size_t i = 0; i < plans.size(); ++i) EXPECT_EQ(plans[i].first, int(i)) << "the grid's order, no repeat";
  auto st = f.core->status(s.job.id);
  EXPECT_EQ(st.gpus[0].planned, 2067840u);
  EXPECT_EQ(st.gpus[0].measured, 40u);
  EXPECT_EQ(st.job.state, "running");
  EXPECT_EQ(f.core->cancel(s.job.id).job.state, "cancelled");
}

// The model strategy screens (verify false, profiled, 2 repetitions), verifies the best screened (stage 1, 5
// repetitions), ends when its budget is screened and its front verified; best is a verified run.
TEST(Searches, ModelScreensVerifiesAndEnds) {
  Fixture f(60);
  f.figures = [](int id) { return Figures{1.0 + std::abs(id - 37) * 0.1, 10.0 + std::abs(id - 37)}; };
  auto s = f.core->submit(f.spec("model", 20));
  EXPECT_GE(s.gpus[0].planned, 20u);
  auto w = f.worker();
  f.drain(w);
  auto st = f.core->status(s.job.id);
  EXPECT_EQ(st.job.state, "done");
  auto runs = f.core->results(s.job.id, "h100", 0);
  size_t screens = 0, verifications = 0;
  for (auto& r : runs) {
    if (r.verify) {
      ++verifications;
      EXPECT_EQ(r.stage, 1u);
      EXPECT_EQ(r.repetitions, 5u);
      EXPECT_TRUE(r.verified);
    } else {
      ++screens;
      EXPECT_EQ(r.repetitions, 1u);
      EXPECT_FALSE(r.verified);
    }
  }
  EXPECT_EQ(screens, 20u);
  EXPECT_GE(verifications, 1u);
  EXPECT_EQ(st.gpus[0].planned, screens + verifications);
  EXPECT_EQ(st.gpus[0].measured, screens + verifications);
  EXPECT_EQ(st.gpus[0].verified, verifications);
  auto best = f.core->best(s.job.id, "h100");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_TRUE(best[0].verified);
  EXPECT_EQ(best[0].stage, 1u);
  // Nothing screened faster than the best went unverified.
  for (auto& r : runs)
    if (!r.verify && r.objective_ms < best[0].objective_ms) {
      bool checked = false;
      for (auto& v : runs) checked |= v.verify && v.config == r.config;
      EXPECT_TRUE(checked) << r.knobs;
    }
}

// A job's last stretch under a time budget leases verifications only: the pending screens wait (and are skipped when
// the budget ends), so the fastest screened configuration is verified before the end.
TEST(Searches, TheClosingPhaseOfATimeBudgetVerifiesTheFrontOnly) {
  Fixture f(60);
  f.figures = [](int id) { return Figures{1.0 + std::abs(id - 37) * 0.1, 10.0 + std::abs(id - 37)}; };
  JobSpec spec = f.spec("model", 200);
  spec.time_budget_s = 600;  // closing: the last max(20 s, 5% = 30 s)
  auto s = f.core->submit(spec);
  auto w = f.worker();
  f.drain(w, 12);  // screens of the initial design, and the front's first verifications
  f.clock += 600 - 25;
  EXPECT_GT(f.core->status(s.job.id).gpus[0].planned, f.core->status(s.job.id).gpus[0].measured);  // screens wait
  int leased = 0;
  for (auto ls = f.core->lease(w, 4); !ls.empty(); ls = f.core->lease(w, 4))
    for (auto& l : ls) {
      EXPECT_TRUE(l.plan.verify) << l.plan.knobs;
      f.report(w, l);
      ++leased;
    }
  EXPECT_GE(leased, 0);
  auto runs = f.core->results(s.job.id, "h100", 0);
  auto best = f.core->best(s.job.id, "h100");
  ASSERT_EQ(best.size(), 1u);
  for (auto& r : runs)
    if (r.valid && !r.verify) {
      EXPECT_GE(r.objective_ms, best[0].objective_ms) << "a faster screen went unverified";
    }
  f.clock += 26;  // the budget ends: the screens left are skipped
  EXPECT_TRUE(f.core->lease(w, 4).empty());
  EXPECT_EQ(f.core->status(s.job.id).job.state, "done");
}

// A screen that takes the model search's front has its verification made at once, though the queue is not low (the
// strategy's urgent proposals after each result), and a worker whose plans are all building leases it alone
// (verifications_only): the screens stay pending. Nothing else is leased that way.
TEST(Searches, AScreenTakingTheFrontIsVerifiedBeforeTheScreensQueuedAhead) {
  Fixture f(60);
  f.figures = [](int id) { return Figures{1.0 + std::abs(id - 37) * 0.1, 10.0 + std::abs(id - 37)}; };
  auto s = f.core->submit(f.spec("model", 200));
  auto w = f.worker();
  EXPECT_TRUE(f.core->lease(w, 4, true).empty());  // no verification pending yet
  auto held = f.core->lease(w, 4);                 // a worker's queue of screens, building
  ASSERT_EQ(held.size(), 4u);
  const Lease* best = nullptr;
  double best_ms = 1e9;
  for (auto& l : held) {
    ASSERT_FALSE(l.plan.verify);
    const int id = nlohmann::json::parse(l.plan.knobs)["id"].get<int>();
    const double ms = f.figures(id).decode_ms;
    if (ms < best_ms) best_ms = ms, best = &l;
  }
  f.report(w, *best);  // the front's first member, measured while the other 3 build
  // (the queue not low: 3 leased and 4 pending of a target of 8, so the strategy was asked for its urgent proposals
  // alone)
  EXPECT_EQ(f.plans(s.job.id).size(), 9u);
  auto v = f.core->lease(w, 4, true);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].plan.verify);
  EXPECT_EQ(v[0].plan.knobs, best->plan.knobs);
  EXPECT_TRUE(f.core->lease(w, 4, true).empty());  // the screens stay pending
  f.report(w, v[0]);
  auto verified = f.core->best(s.job.id, "h100");
  ASSERT_EQ(verified.size(), 1u);
  EXPECT_TRUE(verified[0].verified);
}

// Verifications leased and not yet reported (their checks awaiting the CPU reference's verdict, a minute on an 8B
// model) do not hold the screens up: the search goes on topping the queue up, and ends once they are reported.
// (Counted as open, 4 of them held a queue of 8 at half: the strategy was asked for urgent proposals alone and the
// worker went without plans, 22 s of an H100 job in session 40.)
TEST(Searches, LeasedVerificationsDoNotHoldTheScreensUp) {
  Fixture f(60);
  // (near ties, each within a screen's noise of the best: the front's 3 are verified)
  f.figures = [](int id) { return Figures{1.0 + std::abs(id - 37) * 0.0005, 10.0 + std::abs(id - 37) * 0.005}; };
  auto s = f.core->submit(f.spec("model", 40));
  auto w = f.worker();
  std::vector<Lease> held;
  size_t screens = 0, most_held = 0;
  for (auto ls = f.core->lease(w, 1); !ls.empty(); ls = f.core->lease(w, 1)) {
    if (ls[0].plan.verify) {
      held.push_back(ls[0]);
      most_held = std::max(most_held, held.size());
    } else {
      f.report(w, ls[0]);
      ++screens;
    }
  }
  EXPECT_GE(most_held, 4u);  // enough to have held the queue of 8 at half
  EXPECT_EQ(screens, 40u);   // every screen of the budget measured meanwhile
  EXPECT_EQ(f.core->status(s.job.id).job.state, "running");
  for (auto& l : held) f.report(w, l);
  f.drain(w);
  EXPECT_EQ(f.core->status(s.job.id).job.state, "done");
  auto best = f.core->best(s.job.id, "h100");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_TRUE(best[0].verified);
}

// The model search verifies a screened configuration only within a screen's noise (0.5%) of the best known: with every
// configuration 10% from the next, each verification is of a new best, so the verified objectives fall in the order
// they were measured (the front's second and third, clearly slower, were verified too before session 40).
TEST(Searches, ScreensClearlyBehindTheBestAreNotVerified) {
  Fixture f(60);
  f.figures = [](int id) {
    const int rank = 2 * std::abs(id - 37) - (id < 37 ? 1 : 0);  // 37, 36, 38, 35, ...: each 10% from the next
    return Figures{1.0 + rank * 0.1, 10.0 + rank};
  };
  auto s = f.core->submit(f.spec("model", 40));
  auto w = f.worker();
  f.drain(w);
  EXPECT_EQ(f.core->status(s.job.id).job.state, "done");
  std::vector<double> verified;
  double best_screen = 1e300;
  auto runs = f.core->results(s.job.id, "h100", 0);  // (best first)
  std::sort(runs.begin(), runs.end(), [](const db::Run& a, const db::Run& b) { return a.id < b.id; });
  for (auto& r : runs)
    if (r.verify)
      verified.push_back(r.objective_ms);
    else
      best_screen = std::min(best_screen, r.objective_ms);
  ASSERT_FALSE(verified.empty());
  for (size_t i = 1; i < verified.size(); ++i) EXPECT_LT(verified[i], verified[i - 1]) << i;
  EXPECT_EQ(verified.back(), best_screen);  // the fastest screened is verified
}

// A job's status says what share of its workers' time went to measuring: the runs' load and run seconds over the span
// of their results (the first measurement's start to the last record) times the workers that measured.
TEST(Searches, StatusSaysHowMuchOfTheTimeWentToMeasuring) {
  Fixture f(60);
  auto s = f.core->submit(f.spec("model", 40));
  auto w = f.worker();
  EXPECT_EQ(f.core->status(s.job.id).gpus[0].measuring, 0.0);  // nothing measured yet
  // A plan leased and measured by worker `by`, its cost as given; recorded at the fixture's clock.
  auto measure = [&](int64_t by, const nlohmann::json& cost) {
    auto ls = f.core->lease(by, 1);
    ASSERT_EQ(ls.size(), 1u);
    db::Run r;
    r.valid = true;
    r.verified = ls[0].plan.verify;
    r.median_ms = 1;
    r.prefill_ms = 10;
    r.cost = cost.dump();
    f.core->report(by, ls[0].plan.id, ls[0].plan.lease, r);
  };
  measure(w, {{"measure_s", 2}, {"run_s", 1.5}, {"load_s", 0.5}});  // recorded at 1000: measured from 998
  f.clock += 6;
  measure(w, {{"measure_s", 2}, {"run_s", 1}});  // recorded at 1006: the span 8 s, 3 of them measuring
  EXPECT_DOUBLE_EQ(f.core->status(s.job.id).gpus[0].measuring, 3.0 / 8.0);
  // A second worker's run: the span is both workers' time.
  auto w2 = f.worker("env-b");
  f.clock += 2;
  measure(w2, {{"measure_s", 1}, {"run_s", 1}});  // recorded at 1008: 10 s of 2 workers, 4 measuring
  EXPECT_DOUBLE_EQ(f.core->status(s.job.id).gpus[0].measuring, 4.0 / 20.0);
}

// A restart mid-search loses and repeats nothing: the plans made are the ones an uninterrupted coordinator makes.
TEST(Searches, RestartMidSearchGoesOnAsIfNone) {
  Fixture straight(80), restarted(80);
  for (auto* f : {&straight, &restarted})
    f->figures = [](int id) { return Figures{1.0 + (id * 37 % 80) * 0.05, 10.0 + id % 7}; };
  int64_t a = straight.core->submit(straight.spec("model", 24)).job.id;
  int64_t b = restarted.core->submit(restarted.spec("model", 24)).job.id;
  straight.drain(straight.worker());
  restarted.drain(restarted.worker(), 13);
  restarted.open();
  restarted.drain(restarted.worker());
  EXPECT_EQ(restarted.core->status(b).job.state, "done");
  EXPECT_EQ(restarted.plans(b), straight.plans(a));
  auto runs = restarted.core->results(b, "", 0);
  EXPECT_EQ(runs.size(), restarted.plans(b).size());
}

// A job's search starts from other jobs' verified configurations on the GPU kind: proposed first, marked
// warm:<job> in the results, named in the status.
TEST(Searches, WarmStartSeedsANewJobFromAnotherJobsVerifiedRuns) {
  Fixture f(30);
  auto first = f.core->submit(f.spec("grid"));
  f.drain(f.worker());
  ASSERT_EQ(f.core->status(first.job.id).job.state, "done");
  auto second = f.core->submit(f.spec("model", 10));
  EXPECT_NE(second.gpus[0].note.find("warm start: 3 configurations of job 1"), std::string::npos)
      << second.gpus[0].note;
  auto plans = f.plans(second.job.id);
  ASSERT_GE(plans.size(), 3u);
  std::set<int> warm = {plans[0].first, plans[1].first, plans[2].first};
  EXPECT_EQ(warm, (std::set<int>{0, 1, 2}));  // the first job's best three
  f.drain(f.worker());
  size_t marked = 0;
  for (auto& r : f.core->results(second.job.id, "", 0))
    if (r.origin == "warm:" + std::to_string(first.job.id)) ++marked;
  EXPECT_GE(marked, 3u);
}

// The objective decides the best: a configuration fast at decode, one fast at prefill, one best over the workload.
TEST(Searches, ObjectivesChooseTheirOwnBest) {
  Fixture f(3);
  f.figures = [](int id) { return std::vector<Figures>{{1.0, 100.0}, {1.5, 20.0}, {1.2, 50.0}}.at(size_t(id)); };
  std::map<std::string, int> best;
  for (std::string objective : {"decode", "prefill", "workload"}) {
    auto spec = f.spec("grid");
    spec.objective = objective;
    auto s = f.core->submit(spec);
    EXPECT_EQ(s.job.objective, objective);
    f.drain(f.worker(objective));  // its own environment: measured afresh, not reused
    auto b = f.core->best(s.job.id, "h100");
    ASSERT_EQ(b.size(), 1u);
    best[objective] = nlohmann::json::parse(b[0].knobs)["id"].get<int>();
    auto st = f.core->status(s.job.id);
    EXPECT_DOUBLE_EQ(st.gpus[0].best_objective_ms, b[0].objective_ms);
    EXPECT_DOUBLE_EQ(st.gpus[0].best_prefill_tok_s, 512 * 1000.0 / b[0].prefill_ms);
    EXPECT_DOUBLE_EQ(st.gpus[0].best_workload_ms, b[0].prefill_ms + 127 * b[0].median_ms);
  }
  EXPECT_EQ(best["decode"], 0);    // 1.0 ms/token
  EXPECT_EQ(best["prefill"], 1);   // 20 ms
  EXPECT_EQ(best["workload"], 2);  // 50 + 127 x 1.2 = 202.4 ms, against 227 and 210.5
}

// A lease carries the job's workload (the default shrunk to a short context, and the job says so), whether to verify
// and profile, and where the coordinator reads the checkpoint (its store's copy of a checkpoint named by path).
TEST(Searches, LeasesCarryTheWorkloadAndTheChecks) {
  Fixture f(4, 300);
  auto s = f.core->submit(f.spec("model", 4));
  EXPECT_EQ(s.job.workload_prompt, 240u);
  EXPECT_EQ(s.job.workload_gen, 60u);
  EXPECT_NE(s.job.message.find("shrunk to 240 + 60"), std::string::npos) << s.job.message;
  auto ls = f.core->lease(f.worker(), 1);
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0].workload, (Workload{240, 60}));
  EXPECT_FALSE(ls[0].plan.verify);
  EXPECT_TRUE(ls[0].plan.profile);
  EXPECT_EQ(ls[0].checkpoint_path, f.core->checkpoint_path(ls[0].checkpoint).string());
  EXPECT_EQ(ls[0].checkpoint_path, (f.core->upload_dir() / (ls[0].checkpoint + ".gguf")).string());
  auto explicit_one = f.spec("grid");
  explicit_one.workload = Workload{100, 50};
  EXPECT_EQ(f.core->submit(explicit_one).job.workload_prompt, 100u);
  explicit_one.workload = Workload{250, 51};
  EXPECT_THROW(f.core->submit(explicit_one), InvalidArgument);
}

}  // namespace
}  // namespace lt::coord

namespace lt::coord {
namespace {

// The objective and the workload as the CLI and the coordinator read them.
TEST(Objectives, ParsedAndFittedWithMessagesAUserCanActOn) {
  EXPECT_EQ(parse_objective(""), Objective::Workload);
  EXPECT_EQ(parse_objective("decode"), Objective::Decode);
  EXPECT_EQ(parse_objective("prefill"), Objective::Prefill);
  EXPECT_THROW(parse_objective("latency"), lt::Error);
  EXPECT_EQ(parse_workload("prompt=256,gen=64"), (Workload{256, 64}));
  EXPECT_EQ(parse_workload("gen=32"), (Workload{512, 32}));
  for (const char* bad : {"", "prompt", "prompt=0", "prompt=-3", "prompt=12,len=4", "prompt=1e3"})
    EXPECT_THROW(parse_workload(bad), lt::Error) << bad;
  EXPECT_EQ(fit_workload(std::nullopt, 4096).workload, kDefaultWorkload);
  EXPECT_TRUE(fit_workload(std::nullopt, 4096).note.empty());
  auto shrunk = fit_workload(std::nullopt, 64);
  EXPECT_LE(shrunk.workload.prompt + shrunk.workload.gen, 64u);
  EXPECT_GE(shrunk.workload.gen, 1u);
  EXPECT_FALSE(shrunk.note.empty());
  EXPECT_THROW(fit_workload(Workload{60, 5}, 64), lt::Error);
  db::Run r;
  r.median_ms = 2;
  r.prefill_ms = 30;
  EXPECT_DOUBLE_EQ(objective_ms(Objective::Workload, {512, 128}, r), 30 + 127 * 2);
  r.workload_ms = 250;
  EXPECT_DOUBLE_EQ(objective_ms(Objective::Workload, {512, 128}, r), 250);
  EXPECT_DOUBLE_EQ(objective_ms(Objective::Decode, {512, 128}, r), 2);
  EXPECT_DOUBLE_EQ(objective_ms(Objective::Prefill, {512, 128}, r), 30);
  EXPECT_DOUBLE_EQ(prefill_tok_s(512, 100), 5120);
}

}  // namespace
}  // namespace lt::coord
