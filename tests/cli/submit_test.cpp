// `lane-tune submit` checks every value it can on its own before it uploads or calls the coordinator: the refusals are
// seen with a closed port for the coordinator, so each error seen is the check's, not a connection's.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

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
  EXPECT_NE(s.out.find("a100 measured"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("h200 measured"), std::string::npos) << s.out;
  Output d = run(cli() + " digest " + checkpoint_);
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_NE(s.out.find("checkpoint " + d.out.substr(0, 32) + ","), std::string::npos) << s.out << d.out;
}

// A checkpoint that is not there is "not found" (3), found before any upload.
TEST_F(Submit, AMissingCheckpointIsNotFound) {
  Output r = run(cli() + " submit " + (dir_ / "missing.gguf").string() + " --gpus h200" + kClosedPort);
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_NE(r.out.find("no checkpoint at " + (dir_ / "missing.gguf").string()), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lt::test
