// End to end on loopback: a real coordinator process, replay worker processes and a SQLite file; a job completes,
// survives a worker's SIGKILL and a coordinator's SIGKILL and restart, and a bad request changes nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "cluster.hpp"

namespace lt::test {
namespace {

// Every plan of the job has exactly one run and is done.
void expect_complete(Cluster& c, int64_t job, int64_t planned) {
  auto j = std::to_string(job);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE job = " + j), planned);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE job = " + j), planned);
  EXPECT_EQ(c.query("SELECT COUNT(DISTINCT plan) FROM runs WHERE job = " + j), planned);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE state != 'done' AND job = " + j), 0);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE failure = 'not_recorded'"), 0);
}

// Polls until `sql` counts at least `n`, for up to `timeout_s`.
bool wait_for(Cluster& c, const std::string& sql, int64_t n, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (c.query(sql) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(EndToEnd, HalvingJobRunsToCompletionOnTwoWorkers) {
  Cluster c;
  c.start_coordinator();
  c.start_worker("a", 20);
  c.start_worker("b", 20);
  auto r = c.cli("submit " + c.checkpoint().string() + " --gpus h200 --strategy halving --budget 12 --wait");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.out;
  expect_complete(c, 1, 12 + 4 + 2);
  auto best = c.cli("best 1 --gpu H200");
  EXPECT_EQ(best.status, 0) << best.out;
  EXPECT_NE(best.out.find("decode/token"), std::string::npos) << best.out;
  // The winner's knobs as a file `compile --knobs` reads: every knob, the winner's values; the lane compiled from it
  // records exactly those knobs (the round trip).
  auto knobs = c.cli("best 1 --gpu h200 --knobs " + c.path("best.json").string());
  ASSERT_EQ(knobs.status, 0) << knobs.out;
  const nlohmann::json winner = nlohmann::json::parse(std::ifstream(c.path("best.json")));
  auto space = run(cli() + " knobs " + c.checkpoint().string() + " --json");
  ASSERT_EQ(space.status, 0) << space.out;
  EXPECT_EQ(winner.size(), nlohmann::json::parse(space.out)["knobs"].size());
  auto best_json = c.cli("best 1 --gpu h200 --format json");
  ASSERT_EQ(best_json.status, 0) << best_json.out;
  const auto winners = nlohmann::json::parse(best_json.out)["runs"];
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0]["knobs"], winner);
  EXPECT_FALSE(winners[0].contains("profile"));  // (~1,000 lines of launches: only with --profile)
  EXPECT_TRUE(nlohmann::json::parse(c.cli("best 1 --json --profile").out)["runs"][0].contains("profile"));
  auto lane = run(cli() + " compile " + c.checkpoint().string() + " --knobs " + c.path("best.json").string() + " -o " +
                  c.path("lane").string());
  ASSERT_EQ(lane.status, 0) << lane.out;
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(c.path("lane") / "lane.json"))["knobs"], winner);
  // The results, for people and for programs: a row per run with its ids and flags (a replay worker measured none).
  auto table = c.cli("results 1 --top 3");
  ASSERT_EQ(table.status, 0) << table.out;
  EXPECT_NE(table.out.find("(the winner)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("replayed"), std::string::npos) << table.out;
  auto csv = c.cli("results 1 --format csv");
  ASSERT_EQ(csv.status, 0) << csv.out;
  EXPECT_EQ(csv.out.rfind("run,config,gpu,verdict,", 0), 0u) << csv.out.substr(0, 200);
  size_t records = 0;
  for (size_t at = 0; (at = csv.out.find("\r\n", at)) != std::string::npos; at += 2) ++records;
  EXPECT_EQ(records, 1u + 18u);  // the header and a record per run (knobs quoted: their commas inside one field)
  auto md = c.cli("results 1 --format md --top 1");
  EXPECT_EQ(md.out.rfind("| run | config | gpu | verdict |", 0), 0u) << md.out;
  auto json = c.cli("results 1 --json");
  EXPECT_NE(json.out.find("\"lane-tune-results\""), std::string::npos) << json.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM best_configs WHERE job = 1 AND stage = 2"), 1);
  // The job recorded through the coordinator is a recording a replay worker can start from.
  auto rec = c.cli("record --job 1 -o " + c.path("job1.json").string());
  EXPECT_EQ(rec.status, 0) << rec.out;
  EXPECT_NE(rec.out.find("18 runs"), std::string::npos) << rec.out;

  // The same checkpoint again, for the same GPU kind: every measurement is reused, none measured anew.
  int64_t again = c.submit("--gpus h200 --strategy halving --budget 12");
  EXPECT_EQ(c.wait_done(again, 120), "done");
  expect_complete(c, again, 18);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE reused_from = 0 AND job = " + std::to_string(again)), 0);
}

// A Q4_K_M checkpoint (llama.cpp's mix of q4_k and q6_k) tuned end to end: its space (no tensor-core knobs' effect,
// the int8 numerics over its codes) searched to a verified best whose knobs compile.
TEST(EndToEnd, AQ4KMCheckpointIsTunedToAVerifiedBest) {
  Cluster c("", "q4_k_m");
  c.start_coordinator();
  c.start_worker("a", 10);
  auto space = run(cli() + " knobs " + c.checkpoint().string() + " --json");
  ASSERT_EQ(space.status, 0) << space.out;
  const nlohmann::json knobs = nlohmann::json::parse(space.out);
  EXPECT_NE(knobs["knobs"][0]["values"].dump().find("int8"), std::string::npos) << knobs["knobs"][0].dump();
  auto r = c.cli("submit " + c.checkpoint().string() + " --gpus h200 --strategy halving --budget 8 --wait");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE job = 1 AND state != 'done'"), 0);
  auto best = c.cli("best 1 --gpu h200 --knobs " + c.path("best.json").string());
  ASSERT_EQ(best.status, 0) << best.out;
  auto lane = run(cli() + " compile " + c.checkpoint().string() + " --knobs " + c.path("best.json").string() + " -o " +
                  c.path("lane").string());
  EXPECT_EQ(lane.status, 0) << lane.out;
  EXPECT_NE(std::ifstream(c.path("lane") / "lane.cu").peek(), EOF);
}

// Each plan in `plans` is done with exactly one run, recorded by worker `by` (any worker when empty).
void expect_recorded_once(Cluster& c, const std::vector<int64_t>& plans, const std::string& by = "") {
  for (int64_t p : plans) {
    const std::string id = std::to_string(p);
    EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE state = 'done' AND id = " + id), 1) << "plan " << id;
    EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE plan = " + id), 1) << "plan " << id;
    if (!by.empty()) {
      EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE worker_name = '" + by + "' AND plan = " + id), 1)
          << "plan " << id;
    }
  }
}

// A worker is killed while it holds live leases of the unfinished job: the one holding the most, since a worker
// leases up to 8 plans at once and may hold all there are. The state at the kill is read from the database (nothing
// the dead worker held can change, and a lease outlives its last heartbeat by 2 s). Each plan it held is taken back
// when its lease expires, leased again and measured by the other worker, and the job finishes with every result
// recorded once.
TEST(EndToEnd, WorkerKilledMidJobLosesNothing) {
  Cluster c;
  c.start_coordinator();
  c.start_worker("a", 150);
  c.start_worker("b", 150);
  ASSERT_TRUE(wait_for(c, "SELECT COUNT(*) FROM workers", 2, 30));  // both leasing from the job's start
  const int64_t planned = 12;
  const int64_t job = c.submit("--gpus h200 --strategy random --budget " + std::to_string(planned));
  const std::string j = std::to_string(job);
  const std::string leased =
      "SELECT p.id FROM plans p JOIN workers w ON w.id = p.worker WHERE p.job = " + j + " AND p.state = 'leased'";
  // Mid-job: a result recorded and leases held.
  ASSERT_TRUE(wait_for(
      c, "SELECT COUNT(*) FROM (" + leased + ") WHERE EXISTS (SELECT 1 FROM runs WHERE job = " + j + ")", 1, 30));
  const bool a_holds_most =
      c.query("SELECT w.name = 'a' FROM plans p JOIN workers w ON w.id = p.worker WHERE p.job = " + j +
              " AND p.state = 'leased' GROUP BY w.name ORDER BY COUNT(*) DESC LIMIT 1") == 1;
  const std::string killed = a_holds_most ? "a" : "b", other = a_holds_most ? "b" : "a";
  c.kill_worker(killed);
  const std::vector<int64_t> held = c.column(leased + " AND w.name = '" + killed + "'");
  ASSERT_FALSE(held.empty()) << killed << " held no lease when it was killed";
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM jobs WHERE state = 'running' AND id = " + j), 1);
  EXPECT_LT(c.query("SELECT COUNT(*) FROM runs WHERE job = " + j), planned);

  EXPECT_EQ(c.wait_done(job, 30), "done");
  expect_complete(c, job, planned);
  expect_recorded_once(c, held, other);
  for (int64_t p : held)  // each lost its lease once (the killed worker's) and was leased again
    EXPECT_EQ(c.query("SELECT attempts FROM plans WHERE id = " + std::to_string(p)), 1) << "plan " << p;
}

// The coordinator is killed while the workers hold live leases of the unfinished job (the database as it left it:
// only the coordinator writes it), and restarted on the same port at once; the client waits through it, the plans
// leased at the kill are finished (their holders' results taken after the restart, or leased again), and the job
// finishes with every result recorded once.
TEST(EndToEnd, CoordinatorKilledAndRestartedFinishesTheJob) {
  Cluster c;
  c.start_coordinator();
  c.start_worker("a", 150);
  c.start_worker("b", 150);
  ASSERT_TRUE(wait_for(c, "SELECT COUNT(*) FROM workers", 2, 30));  // both leasing from the job's start
  const int64_t planned = 12;
  Process submit({cli(), "submit", c.checkpoint().string(), "--gpus", "h200", "--strategy", "random", "--budget",
                  std::to_string(planned), "--wait", "--coordinator", c.address()},
                 c.path("submit.log"));
  const std::string leased = "SELECT id FROM plans WHERE state = 'leased' AND job = 1";
  // Mid-job: results recorded and leases held.
  const std::string mid_job =
      "SELECT COUNT(*) FROM (" + leased + ") WHERE (SELECT COUNT(*) FROM runs WHERE job = 1) > 1";
  // (90 s: the job's start takes the coordinator's count of the space and the workers' first builds, slower on a
  // loaded machine; the wait ends as soon as the state is there)
  ASSERT_TRUE(wait_for(c, mid_job, 1, 90));
  const int port = std::stoi(c.address().substr(c.address().rfind(':') + 1));
  c.kill_coordinator();
  const std::vector<int64_t> held = c.column(leased);
  ASSERT_FALSE(held.empty()) << "no lease was held when the coordinator was killed";
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM jobs WHERE state = 'running' AND id = 1"), 1);
  EXPECT_LT(c.query("SELECT COUNT(*) FROM runs WHERE job = 1"), planned);

  c.start_coordinator(port);
  EXPECT_EQ(c.wait_done(1, 30), "done");
  EXPECT_EQ(submit.wait(30), 0);
  expect_complete(c, 1, planned);
  expect_recorded_once(c, held);
}

TEST(EndToEnd, BadRequestsGetInvalidArgumentAndChangeNothing) {
  Cluster c("s3cret");
  c.start_coordinator();
  auto anon = c.cli("status", false);
  EXPECT_NE(anon.status, 0);
  EXPECT_NE(anon.out.find("UNAUTHENTICATED"), std::string::npos) << anon.out;

  // The GPU kinds, the strategy, the objective and the workload are checked by the CLI before anything is uploaded
  // (the coordinator's own refusal of an unknown GPU kind: coordinator_test).
  auto gpu = c.cli("submit " + c.checkpoint().string() + " --path --gpus h200,z999");
  EXPECT_EQ(gpu.status, 2);
  EXPECT_NE(gpu.out.find("unknown GPU kind 'z999'"), std::string::npos) << gpu.out;
  auto strategy = c.cli("submit " + c.checkpoint().string() + " --gpus h200 --strategy annealing");
  EXPECT_NE(strategy.status, 0);
  EXPECT_NE(strategy.out.find("unknown strategy 'annealing'"), std::string::npos) << strategy.out;
  auto objective = c.cli("submit " + c.checkpoint().string() + " --gpus h200 --objective latency");
  EXPECT_NE(objective.out.find("unknown objective 'latency'"), std::string::npos) << objective.out;
  auto workload = c.cli("submit " + c.checkpoint().string() + " --gpus h200 --workload prompt=512,gen=x");
  EXPECT_NE(workload.out.find("'x' is not a count of tokens"), std::string::npos) << workload.out;
  auto big = c.cli("submit " + c.checkpoint().string() + " --path --gpus h200 --workload prompt=9000,gen=1");
  EXPECT_NE(big.out.find("INVALID_ARGUMENT"), std::string::npos) << big.out;
  EXPECT_NE(big.out.find("does not fit the lane's context"), std::string::npos) << big.out;
  auto junk_path = c.path("junk.gguf");
  run("head -c 4096 /dev/urandom > " + junk_path.string());
  auto junk = c.cli("submit " + junk_path.string() + " --gpus h200");
  EXPECT_NE(junk.out.find("INVALID_ARGUMENT"), std::string::npos) << junk.out;
  auto missing = c.cli("status 42");
  EXPECT_NE(missing.out.find("NOT_FOUND"), std::string::npos) << missing.out;

  EXPECT_EQ(c.query("SELECT COUNT(*) FROM jobs"), 0);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM checkpoints"), 0);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans"), 0);
}

TEST(EndToEnd, CancelKeepsTheJobAndStopsIt) {
  Cluster c;
  c.start_coordinator();
  int64_t job = c.submit("--gpus h200,a100 --strategy grid");
  auto r = c.cli("cancel " + std::to_string(job));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("cancelled"), std::string::npos) << r.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE state = 'pending'"), 0);
  auto best = c.cli("best " + std::to_string(job));
  EXPECT_EQ(best.status, 4);  // nothing measured: no best, said so (not an error of the call)
  EXPECT_NE(best.out.find("no verified configuration yet"), std::string::npos) << best.out;
  auto status = c.cli("status " + std::to_string(job));
  EXPECT_EQ(status.status, 0) << status.out;
  EXPECT_NE(status.out.find("cancelled"), std::string::npos) << status.out;
}

// A grid of 75,275,520 points (56,456,640 on the h200, 18,818,880 on the a100) with two replay workers measuring it:
// the submit plans it lazily, leases and status keep answering while it runs, and the progress counts the grid exactly.
TEST(EndToEnd, AHugeGridKeepsLeasesAndStatusAnswering) {
  Cluster c;
  c.start_coordinator();
  c.start_worker("a", 5);
  c.start_worker("b", 5);
  int64_t job = c.submit("--gpus h200,a100 --strategy grid");
  auto j = std::to_string(job);
  EXPECT_EQ(c.query("SELECT SUM(planned) FROM searches WHERE job = " + j), 75275520);
  EXPECT_LE(c.query("SELECT COUNT(*) FROM plans WHERE job = " + j), 64);
  ASSERT_TRUE(wait_for(c, "SELECT COUNT(*) FROM runs WHERE gpu = 'h200' AND job = " + j, 60, 120));
  for (int i = 0; i < 5; ++i) {
    auto st = c.cli("status " + j);
    ASSERT_EQ(st.status, 0) << st.out;
    EXPECT_NE(st.out.find(" 56,456,640 "), std::string::npos) << st.out;
    EXPECT_NE(st.out.find(" 18,818,880 "), std::string::npos) << st.out;
  }
  auto rows = nlohmann::json::parse(c.cli("status " + j + " --format json").out);
  ASSERT_EQ(rows.size(), 2u);
  std::map<std::string, int64_t> planned;
  for (auto& r : rows) planned[r["gpu"]] = r["planned"];
  EXPECT_EQ(planned, (std::map<std::string, int64_t>{{"a100", 18818880}, {"h200", 56456640}}));
  ASSERT_TRUE(wait_for(c, "SELECT COUNT(*) FROM runs WHERE gpu = 'h200' AND job = " + j, 120, 120));
  // Every run of a distinct plan, the h200's in the grid's order, none answered from outside the recording.
  EXPECT_EQ(c.query("SELECT COUNT(*) - COUNT(DISTINCT plan) FROM runs WHERE job = " + j), 0);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE failure = 'not_recorded' AND gpu = 'h200'"), 0);
  EXPECT_EQ(c.cli("cancel " + j).status, 0);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE state = 'pending' AND job = " + j), 0);
}

TEST(EndToEnd, WorkerWithoutAGpuOrARecordingRefusesToStart) {
  if (run("nvidia-smi -L").status == 0) GTEST_SKIP() << "this machine has a GPU";
  auto r = run(cli() + " worker --coordinator 127.0.0.1:1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("no NVIDIA GPU"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lt::test
