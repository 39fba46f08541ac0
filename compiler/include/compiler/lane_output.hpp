// The lane program's output contract (version 1): its exit codes and the machine-readable lines it prints, parsed.
//
// A lane prints, in order: `LANE_CONTRACT: 1`, `DEVICE_BYTES: n`, `HOST_BYTES: n`, `MOVED: n`; then for each prompt
// `TOKENS: t ...`, `PREFILL_MS: x`, and when it generated more than one token `DECODE_MS_PER_TOKEN: x` and
// `DECODE_TOK_PER_S: x`; under --profile, `PROFILE: <kind> <output> <us>` lines for the decode step's launches,
// `PROFILE_TOTAL_US: x`, `PROFILE_CHUNK: <rows> <kind> <output> <us>` and `PROFILE_CHUNK_TOTAL_US: <rows> x`.
// Lines it does not know are ignored by the parser (forward compatible); a known line that does not parse is an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lt::lane {

inline constexpr int kContractVersion = 1;

// The program's exit codes.
enum Exit : int {
  kOk = 0,
  kCudaError = 1,
  kUsage = 2,
  kWrongCheckpoint = 3,  // a checkpoint or sidecar other than its own
  kDoesNotFit = 4,
  kAccounting = 5,
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

// Everything a run printed that the contract names.
struct Output {
  int contract = 0;
  uint64_t device_bytes = 0;
  uint64_t host_bytes = 0;
  int moved = 0;
  std::vector<PromptResult> prompts;
  std::vector<ProfileLine> profile;  // decode step and chunks
  double profile_total_us = 0;       // the decode step's
};

// Parses a run's stdout; throws lt::Error naming the line that breaks the contract.
Output parse_output(std::string_view text);

}  // namespace lt::lane
