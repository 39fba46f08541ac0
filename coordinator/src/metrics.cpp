// The coordinator's metrics: what the core counts and observes, and its text in Prometheus' exposition format.
#include "coordinator/metrics.hpp"

#include <charconv>
#include <mutex>

#include "coordinator/core.hpp"

namespace lt::coord {
namespace {

constexpr double kMinuteS = 60;

// A sample's value: integers as integers, other numbers in their shortest exact form.
std::string number(double x) {
  char b[32];
  auto [end, ec] = std::to_chars(b, b + sizeof b, x);
  return ec == std::errc() ? std::string(b, end) : "NaN";
}
std::string number(uint64_t x) {
  return std::to_string(x);
}
std::string number(int64_t x) {
  return std::to_string(x);
}

// A label's value as the format quotes it: backslash, double quote and line feed escaped.
std::string quoted(const std::string& v) {
  std::string s = "\"";
  for (char c : v) {
    if (c == '\\' || c == '"')
      s += {'\\', c};
    else if (c == '\n')
      s += "\\n";
    else
      s += c;
  }
  return s + "\"";
}

// Writes one metric family at a time: its HELP and TYPE lines, then its samples.
class Exposition {
 public:
  void family(const std::string& name, const char* type, const char* help) {
    name_ = "lane_tune_" + name;
    text_ += "# HELP " + name_ + " " + help + "\n# TYPE " + name_ + " " + type + "\n";
  }
  // A sample of the current family: `suffix` for a histogram's _bucket, _sum and _count; labels as name, value pairs.
  template <class T>
  void sample(const std::vector<std::pair<std::string, std::string>>& labels, T value, const char* suffix = "") {
    text_ += name_ + suffix;
    for (size_t i = 0; i < labels.size(); ++i)
      text_ += (i ? "," : "{") + labels[i].first + "=" + quoted(labels[i].second) + (i + 1 == labels.size() ? "}" : "");
    text_ += " " + number(value) + "\n";
  }
  std::string text() && { return std::move(text_); }

 private:
  std::string name_, text_;
};

}  // namespace

void Histogram::observe(double seconds) {
  for (size_t i = 0; i < bounds.size(); ++i)
    if (seconds <= bounds[i]) ++counts[i];
  sum += seconds;
  ++count;
}

Histogram lease_latency_histogram() {
  return Histogram({0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
}

std::string prometheus_text(const Metrics& m) {
  Exposition e;
  e.family("jobs", "gauge", "Tuning jobs by state.");
  for (auto& [state, n] : m.tally.jobs_by_state) e.sample({{"state", state}}, n);
  e.family("plans", "gauge", "Plans (a configuration to measure at a stage) by state.");
  for (auto& [state, n] : m.tally.plans_by_state) e.sample({{"state", state}}, n);
  e.family("leases_held", "gauge", "Plans leased to a worker whose lease has not expired.");
  e.sample({}, m.tally.leases_held);
  e.family("lease_latency_seconds", "histogram", "How long the coordinator took to answer a Lease call.");
  const Histogram& h = m.lease_latency;
  for (size_t i = 0; i < h.bounds.size(); ++i) e.sample({{"le", number(h.bounds[i])}}, h.counts[i], "_bucket");
  e.sample({{"le", "+Inf"}}, h.count, "_bucket");
  e.sample({}, h.sum, "_sum");
  e.sample({}, h.count, "_count");
  e.family("workers", "gauge",
           "Registered workers by GPU kind and state: busy (holds a live lease), idle (seen within a lease's length), "
           "gone (not seen since; a restarted worker registers anew).");
  for (auto& [gpu, by_state] : m.tally.workers)
    for (const char* state : {"busy", "idle", "gone"}) {
      auto it = by_state.find(state);
      e.sample({{"gpu", gpu}, {"state", state}}, it == by_state.end() ? int64_t{0} : it->second);
    }
  e.family("measurements_last_minute", "gauge", "Measurements recorded in the last 60 seconds, by GPU kind.");
  for (auto& [gpu, n] : m.measurements_last_minute) e.sample({{"gpu", gpu}}, n);
  e.family("measurements_total", "counter", "Measurements recorded since the coordinator started, by GPU kind.");
  for (auto& [gpu, n] : m.measurements_total) e.sample({{"gpu", gpu}}, n);
  return std::move(e).text();
}

Metrics Coordinator::metrics() {
  Metrics m;
  {
    std::lock_guard lock(m_);
    const double at = now();
    m.tally = store_.tally(at, at - o_.lease_s);
  }
  const double at = now();
  std::lock_guard lock(observed_.m);
  while (!observed_.recent.empty() && observed_.recent.front().first < at - kMinuteS) observed_.recent.pop_front();
  m.lease_latency = observed_.lease_latency;
  m.measurements_total = observed_.measurements;
  for (auto& [gpu, n] : observed_.measurements) m.measurements_last_minute[gpu] = 0;
  for (auto& [t, gpu] : observed_.recent) ++m.measurements_last_minute[gpu];
  return m;
}

void Coordinator::observe_lease(double seconds) {
  std::lock_guard lock(observed_.m);
  observed_.lease_latency.observe(seconds);
}

void Coordinator::observe_measurement(const std::string& gpu, double at) {
  std::lock_guard lock(observed_.m);
  ++observed_.measurements[gpu];
  observed_.recent.emplace_back(at, gpu);
  while (observed_.recent.front().first < at - kMinuteS) observed_.recent.pop_front();
}

}  // namespace lt::coord
