// What a tuning job minimizes: the objective (a workload's time to its last token, decode or prefill) and the
// workload the lane is timed on; parsed and checked here for the CLI and the coordinator alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lt::db {
struct Run;
}

namespace lt::coord {

// What a job minimizes, per GPU kind: the workload's time to its last token (prefill of the prompt, then the
// generated tokens), decode ms per token, or the prompt's prefill time.
enum class Objective { Workload, Decode, Prefill };

const char* to_string(Objective o);
// The objective named `name` (workload, decode, prefill; empty: workload); throws lt::Error naming the choices.
Objective parse_objective(const std::string& name);

// The workload a configuration is timed on: a prompt of `prompt` tokens prefilled, then `gen` tokens generated.
struct Workload {
  uint32_t prompt = 0;
  uint32_t gen = 0;
  bool operator==(const Workload&) const = default;
};

// The default workload: 512 prompt tokens, 128 generated.
inline constexpr Workload kDefaultWorkload{512, 128};

// Reads `prompt=512,gen=128` (either part may be left out: it keeps the default's); throws lt::Error saying what is
// wrong.
Workload parse_workload(const std::string& text);

// The workload a job runs on a lane of `context` positions: `asked` when it fits, the default shrunk to fit when none
// was asked (`note` says so), and lt::Error when an asked workload does not fit. REQUIRES: context > 1.
struct FittedWorkload {
  Workload workload;
  std::string note;  // empty unless the default was shrunk
};
FittedWorkload fit_workload(std::optional<Workload> asked, uint32_t context);

// The run's time to the workload's last token: its own figure, else (recordings and workers from before the
// workload) its prefill and `gen` - 1 decode steps.
double workload_ms(const db::Run& r, const Workload& w);
// The run's objective in ms, lower is better: workload -> workload_ms; decode -> median_ms; prefill -> prefill_ms.
double objective_ms(Objective o, const Workload& w, const db::Run& r);
// The prefill rate of the workload's prompt (tokens per second); 0 when unknown.
double prefill_tok_s(uint32_t prompt, double prefill_ms);

}  // namespace lt::coord
