// A resident host process (kernels/resident.cuh): the program that holds one checkpoint's weights on this worker's
// GPU and runs lane images over them on request. It is started once per checkpoint and again after it dies (a lane's
// CUDA error ends it: the device context may be lost with it).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

namespace lt::worker {

// How one image's run ended and what it printed.
struct ResidentRun {
  int status = -1;         // the lane's exit status (END <status>), -1 when the host died or was killed
  bool timed_out = false;  // killed past its time limit
  bool cancelled = false;  // killed because the lease was lost
  bool died = false;       // the host ended before the run did (a CUDA error, a crash)
  std::string out, err;    // the run's standard output (the lane's contract) and error
  double seconds = 0;
};

class ResidentHost {
 public:
  // The host `program` for `checkpoint`, uploading what `manifest` lists; nothing runs until start().
  ResidentHost(std::filesystem::path program, std::filesystem::path checkpoint, std::filesystem::path manifest);
  ~ResidentHost();
  ResidentHost(const ResidentHost&) = delete;
  ResidentHost& operator=(const ResidentHost&) = delete;

  // Starts the process when it is not running and waits for its upload; returns the seconds that took (0 when it was
  // running). Throws lt::Error with what it printed when it does not come up within `timeout_s`.
  double start(double timeout_s);
  bool running() const { return pid_ > 0; }
  // The device bytes its weights take, as it reported them.
  size_t weight_bytes() const { return weight_bytes_; }

  // Runs one image with the lane's flags; killed (and to be started again) past `timeout_s` or when `cancel` rises.
  // REQUIRES: running().
  ResidentRun run(const std::filesystem::path& image, const std::filesystem::path& sidecar,
                  const std::vector<std::string>& flags, double timeout_s, const std::atomic<bool>* cancel);

  // Ends the process (QUIT, then a kill after a grace period).
  void stop();

 private:
  void kill_now();

  std::filesystem::path program_, checkpoint_, manifest_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string pending_out_;  // read past the last line taken
  size_t weight_bytes_ = 0;
};

}  // namespace lt::worker
