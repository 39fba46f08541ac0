// The objective and the workload: names, the `prompt=N,gen=M` form, fitting the lane's context, and a run's figures.
#include "coordinator/objective.hpp"

#include <cmath>
#include <sstream>

#include "compiler/error.hpp"
#include "db/store.hpp"

namespace lt::coord {

const char* to_string(Objective o) {
  switch (o) {
    case Objective::Decode:
      return "decode";
    case Objective::Prefill:
      return "prefill";
    case Objective::Workload:
      break;
  }
  return "workload";
}

Objective parse_objective(const std::string& name) {
  if (name.empty() || name == "workload") return Objective::Workload;
  if (name == "decode") return Objective::Decode;
  if (name == "prefill") return Objective::Prefill;
  throw lt::Error("unknown objective '" + name +
                  "' (workload: time to the workload's last token; decode: ms per token; prefill: the prompt's time)");
}

Workload parse_workload(const std::string& text) {
  Workload w = kDefaultWorkload;
  auto bad = [&](const std::string& why) {
    return lt::Error("--workload '" + text + "': " + why + " (write it as prompt=512,gen=128)");
  };
  if (text.empty()) throw bad("empty");
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    auto eq = part.find('=');
    if (eq == std::string::npos) throw bad("'" + part + "' is not name=count");
    std::string name = part.substr(0, eq), value = part.substr(eq + 1);
    if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + value + "' is not a count of tokens");
    uint32_t n = uint32_t(std::stoul(value));
    if (n == 0) throw bad(name + " must be at least 1 token");
    if (name == "prompt")
      w.prompt = n;
    else if (name == "gen")
      w.gen = n;
    else
      throw bad("unknown part '" + name + "' (prompt, gen)");
  }
  return w;
}

FittedWorkload fit_workload(std::optional<Workload> asked, uint32_t context) {
  if (asked) {
    if (asked->prompt == 0 || asked->gen == 0)
      throw lt::Error("a workload has at least 1 prompt token and 1 generated");
    if (uint64_t(asked->prompt) + asked->gen > context)
      throw lt::Error("the workload (" + std::to_string(asked->prompt) + " prompt tokens + " +
                      std::to_string(asked->gen) + " generated) does not fit the lane's context of " +
                      std::to_string(context) + " positions; ask for at most " + std::to_string(context) +
                      " in all (--workload prompt=N,gen=M)");
    return {*asked, ""};
  }
  Workload w = kDefaultWorkload;
  const uint32_t total = w.prompt + w.gen;
  if (total <= context) return {w, ""};
  // Shrunk in proportion: a fifth of the context generated, the rest prompt.
  w.gen = std::max<uint32_t>(1, context * kDefaultWorkload.gen / total);
  w.prompt = std::max<uint32_t>(1, context - w.gen);
  return {w, "the default workload (" + std::to_string(kDefaultWorkload.prompt) + " prompt + " +
                 std::to_string(kDefaultWorkload.gen) + " generated) is shrunk to " + std::to_string(w.prompt) + " + " +
                 std::to_string(w.gen) + " to fit the lane's context of " + std::to_string(context)};
}

double workload_ms(const db::Run& r, const Workload& w) {
  if (r.workload_ms > 0) return r.workload_ms;
  return r.prefill_ms + double(w.gen > 0 ? w.gen - 1 : 0) * r.median_ms;
}

double objective_ms(Objective o, const Workload& w, const db::Run& r) {
  switch (o) {
    case Objective::Decode:
      return r.median_ms;
    case Objective::Prefill:
      return r.prefill_ms;
    case Objective::Workload:
      break;
  }
  return workload_ms(r, w);
}

double prefill_tok_s(uint32_t prompt, double prefill_ms) {
  return prompt > 0 && prefill_ms > 0 && std::isfinite(prefill_ms) ? prompt * 1000.0 / prefill_ms : 0;
}

}  // namespace lt::coord
