// The worker: registers its GPU, leases plans of its kind, prepares the next while measuring the current, reports.
#pragma once

#include "compiler/digest.hpp"

#include "compiler/log.hpp"

#include <atomic>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/error.hpp"
#include "worker/gpu.hpp"
#include "worker/plan.hpp"
#include "worker/runner.hpp"

namespace lt::worker {

// A coordinator call that failed; `retry` when the coordinator may simply be unreachable, out of resources or short of
// disk for now.
class LinkError : public lt::Error {
 public:
  LinkError(const std::string& what, bool retry, bool unknown_worker = false)
      : lt::Error(what), retry_(retry), unknown_worker_(unknown_worker) {}
  bool retry() const { return retry_; }
  bool unknown_worker() const { return unknown_worker_; }

 private:
  bool retry_, unknown_worker_;
};

// The worker's side of the wire.
class Link {
 public:
  virtual ~Link() = default;
  // Registers; returns the worker's id and the lease length in seconds.
  virtual std::pair<int64_t, double> register_worker(const std::string& name, const Gpu& gpu) = 0;
  // Up to `max` plans; `verifications_only`: only plans that verify (asked while every plan held is still building).
  virtual std::vector<LeasedPlan> lease(int64_t worker, uint32_t max, bool verifications_only) = 0;
  // Returns the leases the worker lost.
  virtual std::vector<int64_t> heartbeat(int64_t worker, const std::vector<int64_t>& leases) = 0;
  virtual bool report(int64_t worker, const LeasedPlan& p, const Result& r) = 0;
  // Streams the checkpoint into `path`.
  virtual void fetch(const std::string& digest, const std::filesystem::path& path) = 0;
};

// A gRPC link to `address`, with the token every call presents; TLS checked against `tls_ca` (a PEM file) when set.
std::unique_ptr<Link> grpc_link(const std::string& address, const std::string& token, const std::string& tls_ca = "");

// The worker's settings.
struct Options {
  std::string name;
  Gpu gpu;
  std::filesystem::path cache_dir;  // checkpoints by digest
  uint32_t prefetch = 2;            // plans held at once: one measured, the next prepared
  double idle_poll_s = 0.2;         // how long an idle worker waits before asking for plans again
  // How often a worker whose plans are all still building asks for a pending verification, and, when none is pending,
  // for one more plan of any kind (0: never).
  double verify_poll_s = 1;
  // Plans leased beyond `prefetch` that way while every plan held is still building: a plan whose kernels are built
  // already is ready in a fraction of a second (session 40: 8 plans building 10-28 s each held an H100 idle 5-7 s at
  // a time, twice in a 4-minute job).
  uint32_t stalled_extra = 0;
  double give_up_s = 0;             // exit after this long without reaching the coordinator (0: never)
  // Registration is tried again while the coordinator cannot take it (unreachable, out of resources, its disk full):
  // after waits of about retry_min_s, doubling up to retry_max_s (Backoff).
  double retry_min_s = 0.5, retry_max_s = 30;
  bool exit_when_idle = false;  // exit when the coordinator has nothing (for tests and one-shot runs)
};

// Waits between attempts: the n-th is drawn between half and all of min(min_s * 2^(n-1), max_s), so that workers
// refused together do not call again together, and none waits more than max_s.
class Backoff {
 public:
  Backoff(double min_s, double max_s, uint64_t seed = std::random_device{}());
  // The next wait in seconds.
  double next();

 private:
  double bound_, max_s_;
  std::mt19937_64 rng_;
};

// The worker's loop; run() returns when stop() is called (or when idle, with exit_when_idle).
class Worker {
 public:
  Worker(Options o, std::unique_ptr<Link> link, std::unique_ptr<Runner> runner);
  ~Worker();
  void run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

using lt::content_digest;  // compiler/digest.hpp

// Worker logs: `key=value` lines on stderr; level 0 is quiet.
inline int& log_level() {
  return logging::level();
}
inline void log(int level, const char* event, std::initializer_list<std::pair<const char*, std::string>> fields) {
  logging::write(level, "worker", event, fields);
}

}  // namespace lt::worker
