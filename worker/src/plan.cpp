// Plans as received and results: a plan checked before anything is done with it; the invalid results carry their
// class, their reason and a shortened output.
#include "worker/plan.hpp"

#include "compiler/digest.hpp"

namespace lt::worker {

Result Result::invalid(std::string failure_class, std::string reason, std::string error) {
  Result r;
  r.valid = false;
  r.failure = std::move(failure_class);
  r.reason = std::move(reason);
  if (error.size() > 4000) error = error.substr(0, 2000) + "\n...\n" + error.substr(error.size() - 2000);
  r.error = std::move(error);
  return r;
}

std::optional<std::string> why_malformed(const LeasedPlan& p) {
  if (p.unreadable) return *p.unreadable;
  if (!is_digest(p.checkpoint))
    return "its checkpoint digest is not 32 hex digits: \"" + p.checkpoint.substr(0, 64) + "\"";
  if (!p.knobs.is_object()) return "its knobs are not a JSON object: " + p.knobs.dump().substr(0, 64);
  for (const Prompt& q : p.prompts) {
    if (q.tokens.empty()) return "a check prompt has no tokens";
    for (int32_t t : q.tokens)
      if (t < 0) return "a check prompt has a negative token " + std::to_string(t);
  }
  return std::nullopt;
}

double objective_figure(const std::string& on, const Result& r) {
  if (on == "workload") return r.workload_ms;
  if (on == "decode") return r.median_ms;
  if (on == "prefill") return r.prefill_ms;
  return 0;
}

}  // namespace lt::worker
