// How a worker measures a plan: on a GPU (the CUDA runner) or from a recorded results file (the replay runner).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "worker/gpu.hpp"
#include "worker/plan.hpp"

namespace lt::worker {

// A way of measuring plans.
class Runner {
 public:
  virtual ~Runner() = default;
  // Whether plans need the checkpoint's bytes on this machine.
  virtual bool needs_checkpoint() const = 0;
  // Does the plan's CPU work (emitting and compiling its lane); may run on another thread while the GPU measures
  // an earlier plan. Returns the measurement, to be run on the worker's thread, one at a time.
  virtual std::function<Result()> prepare(const LeasedPlan& p, const std::filesystem::path& checkpoint) = 0;
  // What the runner did so far, for the record (e.g. kernels built and found built); empty by default.
  virtual nlohmann::json stats() const { return nlohmann::json::object(); }
  // Whether two measurements may be under way at once (the worker then starts the next one while the one before it
  // finishes: the runner serializes what must not overlap, e.g. the GPU, and lets its checks run beside).
  virtual bool overlaps() const { return false; }
};

// The CUDA runner's settings.
struct CudaOptions {
  Gpu gpu;
  std::filesystem::path cache_dir;  // kernel modules by content, the resident host, images, reference logits
  unsigned build_threads = 0;       // nvcc processes at once (0: one a CPU core)
};

// Runs lanes on the GPU through a resident host: the checkpoint's weights go to the GPU once (one process holds them),
// each configuration is a lane image whose kernels come from modules compiled once per kernel instance (cached by
// content, built ahead on every core), and its measurement runs in one go in that process: the job's prompts (the
// checks against the precise lane, run once a job as the reference and itself checked against the CPU reference),
// the workload's warm-up and repetitions, one profiled run, and the --stagger checks when the plan verifies.
std::unique_ptr<Runner> cuda_runner(const CudaOptions& o);

// Answers plans from a recorded results file (`lane-tune results JOB --json`), sleeping `delay_ms` per plan.
std::unique_ptr<Runner> replay_runner(const std::filesystem::path& recording, double delay_ms);

// The GPU kind and environment a recording was made on (its first run's), for a replay worker to register as.
Gpu recorded_gpu(const std::filesystem::path& recording);

}  // namespace lt::worker
