// A tuning cluster on loopback for the end-to-end tests: a real coordinator process, replay worker processes, a
// real SQLite file, a synthesized checkpoint and a synthetic recording; every wait bounded.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace lt::test {

// A child process the test started, killed (by its id) when the object dies.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  void signal(int sig);
  // Waits up to `timeout_s` for the process to end; its exit status, or -1 when it is still running.
  int wait(double timeout_s);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// The cluster.
class Cluster {
 public:
  // A checkpoint of `preset` and `type` (synth --preset --type), its synthetic recording, and no process yet.
  explicit Cluster(const std::string& token = "", const std::string& type = "q8_0",
                   const std::string& preset = "tiny-qwen3");
  ~Cluster();

  // Starts the coordinator (on `port`, 0: any free port) and waits until it serves.
  void start_coordinator(int port = 0);
  void kill_coordinator();
  // Starts a replay worker named `name` whose plans take `delay_ms` each.
  void start_worker(const std::string& name, double delay_ms);
  void kill_worker(const std::string& name, int sig = SIGKILL);

  // `lane-tune ARGS --coordinator ADDR [--token T]`.
  Output cli(const std::string& args, bool with_token = true) const;
  // Submits the checkpoint; returns the job's id (fails the test when it cannot).
  int64_t submit(const std::string& args);
  // Polls the job until it is no longer running or `timeout_s` passes; returns its state.
  std::string wait_done(int64_t job, double timeout_s);
  // One number from the database (a COUNT, say).
  int64_t query(const std::string& sql) const;
  // The first column of every row `sql` selects (plan ids, say).
  std::vector<int64_t> column(const std::string& sql) const;
  // Runs `sql` on the database as another process would (a row damaged, say).
  void exec(const std::string& sql) const;
  // Whether the coordinator process is still running.
  bool coordinator_running() const;

  const std::string& address() const { return address_; }
  const std::filesystem::path& checkpoint() const { return checkpoint_; }
  std::filesystem::path path(const std::string& name) const { return dir_ / name; }

 private:
  TempDir dir_;
  std::string token_;
  std::filesystem::path checkpoint_, recording_;
  std::string address_;
  int port_ = 0;
  std::unique_ptr<Process> coordinator_;
  std::map<std::string, std::unique_ptr<Process>> workers_;
  int coordinator_starts_ = 0;
};

}  // namespace lt::test
