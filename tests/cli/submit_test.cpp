// `lane-tune submit` checks every value it can on its own before it uploads or calls the coordinator: the refusals are
// seen with a closed port for the coordinator, so each error seen is the check's, not a connection's.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace lt::test {
namespace {

constexpr const char* kClosedPort = " --coordinator 127.0.0.1:1";

// A synthesized checkpoint to submit.
class Submit : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(run(cli() + " synth -q --preset tiny-qwen3 -o " + checkpoint_).status, 0); }
  Output submit(const std::string& args) { return run(cli() + " submit " + checkpoint_ + " " + args + kClosedPort); }

  TempDir dir_;
  std::string checkpoint_ = (dir_ / "q.gguf").string();
};

// Each refusal exits with the usage status, names the bad value and the accepted ones, and never reaches the network.
TEST_F(Submit, RefusesBadValuesBeforeCallingTheCoordinator) {
  const std::pair<const char*, const char*> cases[] = {
      {"--gpus h200 --strategy annealing", "unknown strategy 'annealing' (model, grid, random, halving)"},
      {"--gpus z999", "unknown GPU kind 'z999' ("},
      {"--gpus h200,H200", "GPU kind 'H200' named twice"},
      {"--gpus h200 --objective latency", "unknown objective 'latency' (workload:"},
      {"--gpus h200 --workload prompt=512,gen=x", "'x' is not a count of tokens"},
      {"--gpus h200 --time-budget soon", "soon"},
      {"--gpus h200 --budget -3", "--budget"},
  };
  for (const auto& [args, message] : cases) {
    Output r = submit(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("cannot reach the coordinator"), std::string::npos) << args << "\n" << r.out;
  }
  // The unknown GPU kind's message lists the known ones.
  EXPECT_NE(submit("--gpus z999").out.find("h200"), std::string::npos);
}

// A coordinator of its own on a SQLite file in `dir` that reads checkpoints by path there; stopped when it dies.
class LocalCoordinator {
 public:
  explicit LocalCoordinator(const TempDir& dir) {
    const auto port_file = dir / "coordinator.port";
    Output started = run(cli() + " coordinator --db " + (dir / "lt.db").string() +
                         " --listen 127.0.0.1:0 --port-file " + port_file.string() + " --allow-path " +
                         dir.path().string() + " > " + (dir / "coordinator.log").string() + " 2>&1 & echo $!");
    pid_ = std::stoi(started.out);
    std::string port;
    for (int i = 0; i < 300 && port.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // until it writes the port it listens on
      std::ifstream(port_file) >> port;
    }
    address_ = "127.0.0.1:" + port;
  }
  ~LocalCoordinator() { kill(pid_, SIGTERM); }
  LocalCoordinator(const LocalCoordinator&) = delete;
  LocalCoordinator& operator=(const LocalCoordinator&) = delete;
  const std::string& address() const { return address_; }

 private:
  pid_t pid_ = -1;
  std::string address_;
};

// GPU kind names are read without regard to case: `H200` is submitted as `h200`, and `status` names the job's
// checkpoint by the digest `lane-tune digest` prints.
TEST_F(Submit, ReadsGpuKindsWithoutRegardToCase) {
  LocalCoordinator coordinator(dir_);
  const std::string at = " --coordinator " + coordinator.address();
  Output r = run(cli() + " submit " + checkpoint_ + " --path --gpus H200,A100 --strategy random --budget 1" + at);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "job 1\n");
  Output s = run(cli() + " status 1" + at);
  ASSERT_EQ(s.status, 0) << s.out;
  Output d = run(cli() + " digest --format json " + checkpoint_);
  ASSERT_EQ(d.status, 0) << d.out;
  const std::string digest = nlohmann::json::parse(d.out)[0]["digest"];
  EXPECT_NE(s.out.find("checkpoint " + digest + ","), std::string::npos) << s.out << d.out;
  // Every format carries it: the CSV's row, the JSON's checkpoint, and a --gpu given in capitals.
  Output csv = run(cli() + " status 1 --format csv" + at);
  EXPECT_NE(csv.out.find("," + digest + ","), std::string::npos) << csv.out;
  Output results = run(cli() + " results 1 --gpu H200 --format csv" + at);
  EXPECT_EQ(results.status, 0) << results.out;
  Output json = run(cli() + " status --json" + at);
  ASSERT_EQ(json.status, 0) << json.out;
  const auto rows = nlohmann::json::parse(json.out);
  ASSERT_EQ(rows.size(), 2u) << json.out;  // a row per GPU kind, named canonically
  EXPECT_EQ(rows[0]["checkpoint"], digest);
  EXPECT_EQ((std::set<std::string>{rows[0]["gpu"], rows[1]["gpu"]}), (std::set<std::string>{"a100", "h200"}));
}

// Every command that takes a GPU kind reads it without regard to case and refuses an unknown one as a usage error
// (2) naming the known kinds, before it calls the coordinator.
TEST_F(Submit, EveryCommandReadsGpuKindsWithoutRegardToCase) {
  for (const std::string command : {"results 1 --gpu", "best 1 --gpu", "workers --gpu", "nightly --gpus",
                                    "export 1 -o out --gpu", "worker --replay x.json --kind"}) {
    Output bad = run(cli() + " " + command + " Z999" + kClosedPort);
    EXPECT_EQ(bad.status, 2) << command << "\n" << bad.out;
    EXPECT_NE(bad.out.find("unknown GPU kind 'Z999' (a100, "), std::string::npos) << command << "\n" << bad.out;
    EXPECT_EQ(bad.out.find("cannot reach"), std::string::npos) << command << "\n" << bad.out;
  }
  // Offline: the kind's canonical name and figures are what the command uses.
  Output knobs = run(cli() + " knobs " + checkpoint_ + " --gpu A100 --format json");
  ASSERT_EQ(knobs.status, 0) << knobs.out;
  EXPECT_NE(knobs.out.find("\"arch\": 80"), std::string::npos) << knobs.out.substr(0, 400);
  const std::string recording = (dir_ / "rec.json").string();
  Output rec = run(cli() + " record --synthetic " + checkpoint_ + " --gpu H200 -o " + recording);
  ASSERT_EQ(rec.status, 0) << rec.out;
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(recording))["gpu"], "h200");
  // Online: a worker registered as `H200` is listed as h200, and `--gpu H200` finds it.
  LocalCoordinator coordinator(dir_);
  const std::string at = " --coordinator " + coordinator.address();
  Output none = run(cli() + " workers" + at);
  EXPECT_EQ(none.status, 0) << none.out;
  EXPECT_NE(none.out.find("no workers"), std::string::npos) << none.out;
  Output worker = run(cli() + " worker --replay " + recording + " --kind H200 --name w1 --give-up 5" + at + " > " +
                      (dir_ / "worker.log").string() + " 2>&1 & echo $!");
  const pid_t pid = std::stoi(worker.out);
  nlohmann::json listed;
  for (int i = 0; i < 100 && listed.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // until it has registered
    Output w = run(cli() + " workers --gpu H200 --format json" + at);
    ASSERT_EQ(w.status, 0) << w.out;
    listed = nlohmann::json::parse(w.out);
  }
  kill(pid, SIGTERM);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["gpu"], "h200");
  EXPECT_EQ(listed[0]["name"], "w1");
  EXPECT_EQ(listed[0]["state"], "idle");
  EXPECT_EQ(listed[0]["leases"], 0);
  EXPECT_TRUE(nlohmann::json::parse(run(cli() + " workers --gpu a100 --format json" + at).out).empty());
}

// A checkpoint that is not there is "not found" (3), found before any upload.
TEST_F(Submit, AMissingCheckpointIsNotFound) {
  Output r = run(cli() + " submit " + (dir_ / "missing.gguf").string() + " --gpus h200" + kClosedPort);
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("no checkpoint at " + (dir_ / "missing.gguf").string()), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lt::test
