// End to end on loopback: a real coordinator process, replay worker processes and a SQLite file; a job completes,
// survives a worker's SIGKILL and a coordinator's SIGKILL and restart, and a bad request changes nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

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
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
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
  auto best = c.cli("best 1 --gpu h200");
  EXPECT_EQ(best.status, 0) << best.out;
  EXPECT_NE(best.out.find("ms/token"), std::string::npos) << best.out;
  auto json = c.cli("results 1 --json");
  EXPECT_NE(json.out.find("\"lane-tune-results\""), std::string::npos) << json.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM best_configs WHERE job = 1 AND stage = 2"), 1);
  // The job recorded from the database is a recording a replay worker can start from.
  auto rec = run(cli() + " record --db " + c.path("lt.db").string() + " --job 1 -o " + c.path("job1.json").string());
  EXPECT_EQ(rec.status, 0) << rec.out;
  EXPECT_NE(rec.out.find("18 runs"), std::string::npos) << rec.out;

  // The same checkpoint again, for the same GPU kind: every measurement is reused, none measured anew.
  int64_t again = c.submit("--gpus h200 --strategy halving --budget 12");
  EXPECT_EQ(c.wait_done(again, 120), "done");
  expect_complete(c, again, 18);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE reused_from = 0 AND job = " + std::to_string(again)), 0);
}

TEST(EndToEnd, WorkerKilledMidJobLosesNothing) {
  Cluster c;
  c.start_coordinator();
  c.start_worker("a", 300);
  c.start_worker("b", 300);
  int64_t job = c.submit("--gpus h200 --strategy random --budget 16");
  ASSERT_TRUE(wait_for(c, "SELECT COUNT(*) FROM runs WHERE worker_name = 'a'", 1, 120));
  c.kill_worker("a");
  EXPECT_EQ(c.wait_done(job, 180), "done");
  expect_complete(c, job, 16);
}

TEST(EndToEnd, CoordinatorKilledAndRestartedFinishesTheJob) {
  Cluster c;
  c.start_coordinator();
  c.start_worker("a", 250);
  c.start_worker("b", 250);
  // The client waits through the restart too.
  Process submit({cli(), "submit", c.checkpoint().string(), "--gpus", "h200", "--strategy", "random", "--budget", "16",
                  "--wait", "--coordinator", c.address()},
                 c.path("submit.log"));
  ASSERT_TRUE(wait_for(c, "SELECT COUNT(*) FROM runs", 3, 120));
  int port = std::stoi(c.address().substr(c.address().rfind(':') + 1));
  c.kill_coordinator();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  c.start_coordinator(port);
  EXPECT_EQ(c.wait_done(1, 180), "done");
  EXPECT_EQ(submit.wait(60), 0);
  expect_complete(c, 1, 16);
}

TEST(EndToEnd, BadRequestsGetInvalidArgumentAndChangeNothing) {
  Cluster c("s3cret");
  c.start_coordinator();
  auto anon = c.cli("status", false);
  EXPECT_NE(anon.status, 0);
  EXPECT_NE(anon.out.find("UNAUTHENTICATED"), std::string::npos) << anon.out;

  auto gpu = c.cli("submit " + c.checkpoint().string() + " --path --gpus h200,z999");
  EXPECT_NE(gpu.status, 0);
  EXPECT_NE(gpu.out.find("INVALID_ARGUMENT"), std::string::npos) << gpu.out;
  // The strategy, the objective and the workload are checked by the CLI before anything is uploaded.
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
  EXPECT_EQ(best.status, 1);  // nothing measured: no best, said so (not an error of the call)
  EXPECT_NE(best.out.find("no verified configuration yet"), std::string::npos) << best.out;
  auto status = c.cli("status " + std::to_string(job));
  EXPECT_EQ(status.status, 0) << status.out;
  EXPECT_NE(status.out.find("cancelled"), std::string::npos) << status.out;
}

// A grid of 2,067,840 points (1,378,560 on the h200, 689,280 on the a100) with two replay workers measuring it: the
// submit plans it lazily, leases and status keep answering while it runs, and the progress counts the grid exactly.
TEST(EndToEnd, AHugeGridKeepsLeasesAndStatusAnswering) {
  Cluster c;
  c.start_coordinator();
  c.start_worker("a", 5);
  c.start_worker("b", 5);
  int64_t job = c.submit("--gpus h200,a100 --strategy grid");
  auto j = std::to_string(job);
  EXPECT_EQ(c.query("SELECT SUM(planned) FROM searches WHERE job = " + j), 2067840);
  EXPECT_LE(c.query("SELECT COUNT(*) FROM plans WHERE job = " + j), 64);
  ASSERT_TRUE(wait_for(c, "SELECT COUNT(*) FROM runs WHERE gpu = 'h200' AND job = " + j, 60, 120));
  for (int i = 0; i < 5; ++i) {
    auto st = c.cli("status " + j);
    ASSERT_EQ(st.status, 0) << st.out;
    EXPECT_NE(st.out.find("/ 1,378,560 planned"), std::string::npos) << st.out;
    EXPECT_NE(st.out.find("/ 689,280 planned"), std::string::npos) << st.out;
  }
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
