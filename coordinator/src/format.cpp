// How client commands print jobs and results: progress lines, tables, the results JSON (the replay format).
#include <cmath>
#include <cstdio>

#include "coordinator/client.hpp"

namespace lt::coord {
namespace {
std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}
std::string duration(double s) {
  if (s < 120) return fmt("%.0fs", s);
  if (s < 7200) return fmt("%.0fm", s / 60);
  return fmt("%.1fh", s / 3600);
}
nlohmann::json object_or_text(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  return j.is_discarded() ? nlohmann::json(s) : j;
}
}  // namespace

std::string progress_line(const JobStatus& s) {
  std::string line = "job " + std::to_string(s.job.id) + " " + s.job.state + ":";
  for (auto& g : s.gpus) {
    line += " " + g.gpu + " " + std::to_string(g.done) + "/" + std::to_string(g.planned) + " done, " +
            std::to_string(g.valid) + " valid, " + std::to_string(g.failed) + " failed, best " +
            (g.best_ms > 0 ? fmt("%.4g ms", g.best_ms) : std::string("-")) + ";";
  }
  if (s.time_left_s >= 0) line += " " + duration(s.time_left_s) + " left";
  return line;
}

std::string describe(const JobStatus& s) {
  std::string out = progress_line(s) + "\n";
  out += "  checkpoint " + s.job.checkpoint + ", strategy " + s.job.strategy;
  if (!s.job.message.empty()) out += ", " + s.job.message;
  out += "\n";
  for (auto& g : s.gpus)
    if (!g.best_knobs.empty()) out += "  best on " + g.gpu + ": " + g.best_knobs + "\n";
  return out;
}

std::string results_table(const std::vector<db::Run>& runs) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-7s %5s %4s %10s %9s %9s %6s  %-14s %s\n", "gpu", "stage", "reps", "ms/token",
                "spread", "tok/s", "valid", "failure", "knobs");
  out += line;
  for (auto& r : runs) {
    std::snprintf(line, sizeof line, "%-7s %5u %4u %10.4f %9.4f %9.1f %6s  %-14s %s\n", r.gpu.c_str(), r.stage,
                  r.repetitions, r.median_ms, r.spread_ms, r.tok_per_s, r.valid ? "yes" : "no",
                  r.valid ? "" : (r.failure.empty() ? "invalid" : r.failure.c_str()), r.knobs.c_str());
    out += line;
    if (!r.valid && !r.reason.empty()) out += "        reason: " + r.reason + "\n";
  }
  return out;
}

nlohmann::json results_json(int64_t job, const std::vector<db::Run>& runs) {
  nlohmann::json v = nlohmann::json::array();
  for (auto& r : runs) {
    v.push_back({{"gpu", r.gpu},
                 {"knobs", object_or_text(r.knobs)},
                 {"stage", r.stage},
                 {"repetitions", r.repetitions},
                 {"median_ms", r.median_ms},
                 {"spread_ms", r.spread_ms},
                 {"min_ms", r.min_ms},
                 {"max_ms", r.max_ms},
                 {"prefill_ms", r.prefill_ms},
                 {"tok_per_s", r.tok_per_s},
                 {"compile_s", r.compile_s},
                 {"profile", object_or_text(r.profile)},
                 {"logits_hash", r.logits_hash},
                 {"rel_l2", r.rel_l2},
                 {"argmax_agree", r.argmax_agree},
                 {"tokens_equal", r.tokens_equal},
                 {"stagger_equal", r.stagger_equal},
                 {"valid", r.valid},
                 {"reason", r.reason},
                 {"failure", r.failure},
                 {"error", r.error},
                 {"worker", r.worker_name},
                 {"environment", object_or_text(r.environment)}});
  }
  return {{"format", "lane-tune-results"}, {"version", 1}, {"job", job}, {"runs", v}};
}

double parse_duration(const std::string& t) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(t, &used);
  } catch (const std::exception&) {
    throw lt::Error("'" + t + "' is not a duration (90, 90s, 30m, 2h)");
  }
  std::string unit = t.substr(used);
  double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  if (scale < 0 || !std::isfinite(x) || x < 0) throw lt::Error("'" + t + "' is not a duration (90, 90s, 30m, 2h)");
  return x * scale;
}

}  // namespace lt::coord
