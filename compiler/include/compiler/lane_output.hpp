// The lane program's output contract (version 3): its exit codes and the machine-readable lines it prints, parsed.
//
// A lane prints, in order: `LANE_CONTRACT: 3`, `DEVICE_BYTES: n`, `HOST_BYTES: n`, `MOVED: n`; then for each prompt
// `TOKENS: t ...`, `PREFILL_MS: x`, and when it generated more than one token `DECODE_MS_PER_TOKEN: x` and
// `DECODE_TOK_PER_S: x`; under --workload P,G one line a timed run, `WORKLOAD: <run> <P> <G> <prefill ms>
// <decode ms per token> <total ms>`; under --profile `PROFILE_TIMING: <how>`, `PROFILE: <kind> <output> <us>` lines
// for the decode step's launches, `PROFILE_TOTAL_US: x`, `PROFILE_CHUNK: <rows> <kind> <output> <us>`,
// `PROFILE_CHUNK_TOTAL_US: <rows> x` and `PROFILE_RUNS: <rows> <steps>` (under --workload the steps of each form one
// run of the workload takes, the launches' means from a profiled run of its prefill and up to 16 decode steps;
// without, the steps the profiled prompts took); `LOGITS_HASH: <16 hex>` (xxh64 of the prompts' logits as f32)
// when it kept them; under --stagger-check `STAGGER_CHECK: <seed> same|differs`; and `PHASE_MS: <phase> <ms>`, the
// wall time of each phase of the run (setup, prompts, workload, profile, stagger). Under --cutoff K=ms, when the
// workload's first run (the last warm-up, its one decode step standing for every step; or the first timed run without
// a warm-up) puts figure K past ms: `CUTOFF: <P> <G> <prefill ms> <decode ms per token> <total ms> <limit ms>`, and no
// further timed runs or profile. Versions 1 (without the workload, PROFILE_RUNS, LOGITS_HASH and STAGGER_CHECK lines)
// and 2 (without CUTOFF) parse too.
// Lines it does not know are ignored by the parser (forward compatible); a known line that does not parse is an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/exits.cuh"

namespace lt::lane {

inline constexpr int kContractVersion = 3;

// The program's exit codes (kernels/exits.cuh, the lane's own definition).
enum Exit : int {
  kOk = LK_EXIT_OK,
  kCudaError = LK_EXIT_CUDA,
  kUsage = LK_EXIT_USAGE,
  kWrongCheckpoint = LK_EXIT_WRONG_CHECKPOINT,  // a checkpoint or sidecar other than its own
  kDoesNotFit = LK_EXIT_DOES_NOT_FIT,
  kAccounting = LK_EXIT_ACCOUNTING,
};

// One prompt's figures.
struct PromptResult {
  std::vector<int32_t> tokens;
  double prefill_ms = 0;
  double decode_ms_per_token = 0;  // 0 when one token was generated
  double decode_tok_per_s = 0;
};

// One launch's mean time under --profile: the form's rows (1: the decode step), its kind, its output, microseconds.
struct ProfileLine {
  int rows = 1;
  std::string kind;
  std::string output;
  double us = 0;
};

// One timed run of the workload.
struct WorkloadRun {
  int prompt = 0, gen = 0;
  double prefill_ms = 0, decode_ms_per_token = 0, total_ms = 0;
};

// A workload stopped by --cutoff: the figures of the run that decided it, and the limit they passed.
struct Cutoff {
  WorkloadRun run;
  double limit_ms = 0;
};

// How many steps of the form of `rows` rows the profiled run took.
struct FormRuns {
  int rows = 1;
  int runs = 0;
};

// One --stagger-check seed's verdict.
struct StaggerCheck {
  uint64_t seed = 0;
  bool same = false;
};

// Everything a run printed that the contract names.
struct Output {
  int contract = 0;
  uint64_t device_bytes = 0;
  uint64_t host_bytes = 0;
  int moved = 0;
  std::vector<PromptResult> prompts;
  std::vector<WorkloadRun> workload;
  std::optional<Cutoff> cutoff;  // the workload was stopped early: its figures are estimates
  std::vector<ProfileLine> profile;  // decode step and chunks
  double profile_total_us = 0;       // the decode step's
  std::vector<FormRuns> profile_runs;
  std::string logits_hash;  // empty when not printed
  std::vector<StaggerCheck> stagger_checks;
  std::vector<std::pair<std::string, double>> phases;  // (phase, wall ms)
};

// Parses a run's stdout; throws lt::Error naming the line that breaks the contract.
Output parse_output(std::string_view text);

}  // namespace lt::lane
