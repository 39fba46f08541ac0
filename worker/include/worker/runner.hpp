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
  virtual std::function<Result()> prepare(const Plan& p, const std::filesystem::path& checkpoint) = 0;
};

// The CUDA runner's settings.
struct CudaOptions {
  Gpu gpu;
  std::filesystem::path cache_dir;  // compiled lanes by content hash, reference logits
};

// Runs lanes on the GPU: compiles with nvcc (cached by the hash of the .cu, the sidecar and the flags), runs the
// precise lane once per job as the reference, then each configuration: warm-up, repetitions, --profile, --stagger
// seeds, --logits checks.
std::unique_ptr<Runner> cuda_runner(const CudaOptions& o);

// Answers plans from a recorded results file (`lane-tune results JOB --json`), sleeping `delay_ms` per plan.
std::unique_ptr<Runner> replay_runner(const std::filesystem::path& recording, double delay_ms);

// The GPU kind and environment a recording was made on (its first run's), for a replay worker to register as.
Gpu recorded_gpu(const std::filesystem::path& recording);

}  // namespace lt::worker
