// Results: the invalid ones carry their class, their reason and a shortened output.
#include "worker/plan.hpp"

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

double objective_figure(const std::string& on, const Result& r) {
  if (on == "workload") return r.workload_ms;
  if (on == "decode") return r.median_ms;
  if (on == "prefill") return r.prefill_ms;
  return 0;
}

}  // namespace lt::worker
