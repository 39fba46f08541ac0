// The loopback cluster the end-to-end tests run: processes started by fork/exec and waited on with timeouts.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "cluster.hpp"
#include "coordinator/client.hpp"
#include "db/sqlite.hpp"

namespace lt::test {

Process::Process(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

Process::~Process() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void Process::signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

int Process::wait(double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      reaped_ = true;
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    if (std::chrono::steady_clock::now() > end) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Cluster::Cluster(const std::string& token, const std::string& type, const std::string& preset) : token_(token) {
  checkpoint_ = dir_ / "tiny.gguf";
  recording_ = dir_ / "recording.json";
  auto s = run(test::cli() + " synth --preset " + preset + " --type " + type + " -q -o " + checkpoint_.string());
  EXPECT_EQ(s.status, 0) << s.out;
  auto r = run(test::cli() + " record --synthetic " + checkpoint_.string() + " --gpu h200 -o " + recording_.string());
  EXPECT_EQ(r.status, 0) << r.out;
}

Cluster::~Cluster() {
  for (auto& [name, w] : workers_) w->signal(SIGKILL);
  workers_.clear();
  coordinator_.reset();
}

void Cluster::start_coordinator(int port) {
  auto port_file = dir_ / "port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = {test::cli(),   "coordinator",
                                   "--db",        (dir_ / "lt.db").string(),
                                   "--listen",    "127.0.0.1:" + std::to_string(port),
                                   "--port-file", port_file.string(),
                                   "--lease",     "2",
                                   "--allow-path", dir_.path().string(),
                                   "-v"};
  if (!token_.empty()) argv.insert(argv.end(), {"--token", token_});
  coordinator_ =
      std::make_unique<Process>(argv, dir_ / ("coordinator-" + std::to_string(++coordinator_starts_) + ".log"));
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(port_file)) {
    ASSERT_LT(std::chrono::steady_clock::now(), end) << "the coordinator did not start";
    ASSERT_EQ(coordinator_->wait(0), -1) << "the coordinator exited";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::ifstream(port_file) >> port_;
  address_ = "127.0.0.1:" + std::to_string(port_);
}

void Cluster::kill_coordinator() {
  coordinator_->signal(SIGKILL);
  EXPECT_NE(coordinator_->wait(30), -1);
}

void Cluster::start_worker(const std::string& name, double delay_ms) {
  std::vector<std::string> argv = {test::cli(),
                                   "worker",
                                   "--coordinator",
                                   address_,
                                   "--replay",
                                   recording_.string(),
                                   "--replay-delay",
                                   std::to_string(delay_ms),
                                   "--name",
                                   name,
                                   "--cache",
                                   (dir_ / ("cache-" + name)).string(),
                                   "-v"};
  if (!token_.empty()) argv.insert(argv.end(), {"--token", token_});
  workers_[name] = std::make_unique<Process>(argv, dir_ / ("worker-" + name + ".log"));
}

void Cluster::kill_worker(const std::string& name, int sig) {
  workers_.at(name)->signal(sig);
  EXPECT_NE(workers_.at(name)->wait(30), -1);
}

Output Cluster::cli(const std::string& args, bool with_token) const {
  std::string cmd = "timeout 300 " + test::cli() + " " + args + " --coordinator " + address_;
  if (with_token && !token_.empty()) cmd += " --token " + token_;
  return run(cmd);
}

int64_t Cluster::submit(const std::string& args) {
  auto r = cli("submit " + checkpoint_.string() + " " + args);
  EXPECT_EQ(r.status, 0) << r.out;
  auto at = r.out.find("job ");
  EXPECT_NE(at, std::string::npos) << r.out;
  return at == std::string::npos ? 0 : std::stoll(r.out.substr(at + 4));
}

std::string Cluster::wait_done(int64_t job, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  coord::Client client(address_, token_, 10);
  for (;;) {
    try {
      auto s = client.status(job);
      if (s.job.state != "running") return s.job.state;
    } catch (const std::exception&) {
      // the coordinator may be restarting
    }
    if (std::chrono::steady_clock::now() > end) return "timed out";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

int64_t Cluster::query(const std::string& sql) const {
  db::Connection c(dir_ / "lt.db");
  auto s = c.prepare(sql);
  return s.next() ? s.i64(0) : -1;
}

std::vector<int64_t> Cluster::column(const std::string& sql) const {
  db::Connection c(dir_ / "lt.db");
  auto s = c.prepare(sql);
  std::vector<int64_t> v;
  while (s.next()) v.push_back(s.i64(0));
  return v;
}

void Cluster::exec(const std::string& sql) const {
  db::Connection c(dir_ / "lt.db");
  c.prepare(sql).exec();
}

bool Cluster::coordinator_running() const {
  return coordinator_ && coordinator_->wait(0) == -1;
}

}  // namespace lt::test
