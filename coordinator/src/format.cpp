// How client commands print jobs and results: progress lines, tables, the results JSON (the replay format).
#include <algorithm>
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
// A whole number with thousands separators: 6,300.
std::string thousands(double x) {
  std::string digits = fmt("%.0f", x), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}
// Milliseconds as ms below a second, else seconds.
std::string ms_or_s(double ms) {
  return ms < 1000 ? fmt("%.4g ms", ms) : fmt("%.3g s", ms / 1000);
}
}  // namespace

const char* to_string(RunVerdict v) {
  switch (v) {
    case RunVerdict::Verified:
      return "verified";
    case RunVerdict::Screened:
      return "screened";
    case RunVerdict::Failed:
      break;
  }
  return "failed";
}

RunVerdict verdict_of(const db::Run& r) {
  if (!r.valid) return RunVerdict::Failed;
  return r.verified ? RunVerdict::Verified : RunVerdict::Screened;
}

std::string best_figures(double decode_ms, double prefill_tok_s, double workload_ms) {
  std::string s = fmt("%.4g ms/tok", decode_ms);
  if (prefill_tok_s > 0) s += " · " + thousands(prefill_tok_s) + " prefill tok/s";
  if (workload_ms > 0) s += " · " + ms_or_s(workload_ms) + " workload";
  return s;
}

std::string progress_line(const JobStatus& s) {
  std::string line = "job " + std::to_string(s.job.id) + " " + s.job.state + ":";
  for (auto& g : s.gpus) {
    line += " " + g.gpu + " measured " + thousands(g.measured) + " / " + thousands(g.planned) + " planned, " +
            thousands(g.verified) + " verified";
    if (g.failed) line += ", " + thousands(g.failed) + " failed";
    line += ", best " +
            (g.best_ms > 0 ? best_figures(g.best_ms, g.best_prefill_tok_s, g.best_workload_ms) : std::string("-")) +
            ";";
  }
  if (s.time_left_s >= 0) line += " " + duration(s.time_left_s) + " left";
  return line;
}

std::string describe(const JobStatus& s) {
  std::string out = progress_line(s) + "\n";
  out += "  checkpoint " + s.job.checkpoint + ", strategy " + s.job.strategy + ", objective " + s.job.objective;
  if (s.job.workload_gen > 0)
    out += " (" + std::to_string(s.job.workload_prompt) + " prompt tokens + " + std::to_string(s.job.workload_gen) +
           " generated)";
  if (!s.job.message.empty()) out += ", " + s.job.message;
  out += "\n";
  for (auto& g : s.gpus) {
    if (!g.note.empty()) out += "  " + g.gpu + ": " + g.note + "\n";
    if (!g.best_knobs.empty()) out += "  best on " + g.gpu + " (verified): " + g.best_knobs + "\n";
  }
  return out;
}

// Whether a cutoff stopped the run after its workload's first run (its figures are that run's estimate).
static bool cut_off(const db::Run& r) {
  const auto cost = nlohmann::json::parse(r.cost, nullptr, false);
  return cost.is_object() && cost.contains("cutoff_ms");
}

std::string results_table(const std::vector<db::Run>& runs) {
  std::string out;
  char line[1024];
  std::snprintf(line, sizeof line, "%-7s %5s %4s %-9s %11s %10s %8s %10s %11s  %-12s %-14s %s\n", "gpu", "stage",
                "reps", "verdict", "objective", "ms/token", "tok/s", "prefill/s", "workload", "origin", "failure",
                "knobs");
  out += line;
  for (auto& r : runs) {
    std::snprintf(line, sizeof line, "%-7s %5u %4u %-9s %11s %10.4f %8.1f %10s %11s  %-12s %-14s %s\n", r.gpu.c_str(),
                  r.stage, r.repetitions, to_string(verdict_of(r)),
                  r.valid ? ((cut_off(r) ? "~" : "") + ms_or_s(r.objective_ms)).c_str() : "-",
                  r.median_ms, r.tok_per_s, r.prefill_tok_s > 0 ? thousands(r.prefill_tok_s).c_str() : "-",
                  r.workload_ms > 0 ? ms_or_s(r.workload_ms).c_str() : "-", r.origin.c_str(),
                  r.valid ? "" : (r.failure.empty() ? "invalid" : r.failure.c_str()), r.knobs.c_str());
    out += line;
    if (!r.valid && !r.reason.empty()) out += "        reason: " + r.reason + "\n";
  }
  if (std::any_of(runs.begin(), runs.end(), [](const db::Run& r) { return r.valid && cut_off(r); }))
    out += "~: a screen stopped after its first run, already past the cutoff (its figures are that run's estimate)\n";
  return out;
}

nlohmann::json results_json(int64_t job, const std::vector<db::Run>& runs) {
  nlohmann::json v = nlohmann::json::array();
  for (auto& r : runs) {
    v.push_back({{"gpu", r.gpu},
                 {"run", r.id},
                 {"recorded_at", r.recorded_at},
                 {"knobs", object_or_text(r.knobs)},
                 {"stage", r.stage},
                 {"repetitions", r.repetitions},
                 {"verify", r.verify},
                 {"verdict", to_string(verdict_of(r))},
                 {"cut_off", cut_off(r)},
                 {"origin", r.origin},
                 {"objective_ms", r.objective_ms},
                 {"median_ms", r.median_ms},
                 {"spread_ms", r.spread_ms},
                 {"min_ms", r.min_ms},
                 {"max_ms", r.max_ms},
                 {"prefill_ms", r.prefill_ms},
                 {"prefill_tok_s", r.prefill_tok_s},
                 {"workload_ms", r.workload_ms},
                 {"tok_per_s", r.tok_per_s},
                 {"compile_s", r.compile_s},
                 {"cost", object_or_text(r.cost)},
                 {"profile", object_or_text(r.profile)},
                 {"logits_hash", r.logits_hash},
                 {"rel_l2", r.rel_l2},
                 {"argmax_agree", r.argmax_agree},
                 {"tokens_equal", r.tokens_equal},
                 {"stagger_equal", r.stagger_equal},
                 {"valid", r.valid},
                 {"verified", r.verified},
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
