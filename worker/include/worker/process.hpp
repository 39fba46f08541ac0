// Child processes with a time limit: fork/exec in their own process group, output captured, killed when late.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

namespace lt::worker {

// How a child process ended and what it printed.
struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  bool cancelled = false;
  std::string out, err;
  double seconds = 0;
};

// Runs argv[0] (searched on PATH) with `timeout_s` (0: none); on timeout, or when `cancel` is raised, its whole
// process group is killed.
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_s,
                          const std::atomic<bool>* cancel = nullptr);

}  // namespace lt::worker
