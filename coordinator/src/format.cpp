// A run as clients read it: its verdict and flags, the results JSON (the replay format), durations.
#include <cmath>

#include "coordinator/client.hpp"

namespace lt::coord {
namespace {
nlohmann::json object_or_text(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  return j.is_discarded() ? nlohmann::json(s) : j;
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

bool cut_off(const db::Run& r) {
  const auto cost = nlohmann::json::parse(r.cost, nullptr, false);
  return cost.is_object() && cost.contains("cutoff_ms");
}

bool replayed(const db::Run& r) {
  const auto env = nlohmann::json::parse(r.environment, nullptr, false);
  return env.is_object() && env.value("replay", false) == true;
}

nlohmann::json results_json(int64_t job, const std::vector<db::Run>& runs, bool with_profiles) {
  nlohmann::json v = nlohmann::json::array();
  for (auto& r : runs) {
    v.push_back({{"gpu", r.gpu},
                 {"run", r.id},
                 {"config", r.config},
                 {"recorded_at", r.recorded_at},
                 {"knobs", object_or_text(r.knobs)},
                 {"stage", r.stage},
                 {"repetitions", r.repetitions},
                 {"verify", r.verify},
                 {"verdict", to_string(verdict_of(r))},
                 {"cut_off", cut_off(r)},
                 {"reused_from", r.reused_from},
                 {"replayed", replayed(r)},
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
    if (!with_profiles) v.back().erase("profile");
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
