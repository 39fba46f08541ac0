// The coordinator's metrics: its state in numbers (Coordinator::metrics), written in Prometheus' text exposition
// format, and served over HTTP at /metrics on a port of its own.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/store.hpp"

namespace lt::coord {

class Coordinator;

// A cumulative histogram of durations in seconds, as Prometheus keeps one: counts per upper bound, the sum and the
// count of every observation.
struct Histogram {
  std::vector<double> bounds;    // upper bounds, increasing (the +Inf bucket is `count`)
  std::vector<uint64_t> counts;  // per bound: the observations at or under it
  double sum = 0;
  uint64_t count = 0;

  explicit Histogram(std::vector<double> upper_bounds = {})
      : bounds(std::move(upper_bounds)), counts(bounds.size(), 0) {}
  void observe(double seconds);
};

// An empty histogram for Lease calls' durations: bounds from 0.5 ms to 10 s (a lease takes ~1 ms on a quiet
// coordinator; one waiting on the database's lock or a burst of reports takes longer).
Histogram lease_latency_histogram();

// The coordinator's state at one moment, as /metrics shows it.
struct Metrics {
  db::Tally tally;          // jobs and plans by state, live leases, workers by GPU kind and state
  Histogram lease_latency;  // how long Lease calls took in the core, seconds
  // Measurements recorded (reports from workers, reused runs not counted) by GPU kind: since the coordinator started,
  // and in the last 60 seconds.
  std::map<std::string, uint64_t> measurements_total, measurements_last_minute;
};

// `m` in Prometheus' text exposition format (version 0.0.4): a HELP and a TYPE line per metric family, then its
// samples, every name prefixed lane_tune_.
std::string prometheus_text(const Metrics& m);

// An HTTP server for /metrics (anything else: 404); stops when destroyed. It serves only what `core.metrics()`
// returns: no writes, no token.
class MetricsServer {
 public:
  // Listens on `listen` (host:port; port 0: any free one); throws lt::Error when it cannot.
  MetricsServer(Coordinator& core, const std::string& listen);
  ~MetricsServer();
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lt::coord
