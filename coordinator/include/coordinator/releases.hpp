// Releases and nightly runs: a job's winner for a GPU kind frozen with its baseline, re-measured every night by a job
// that runs exactly its configuration, and judged by a noise-aware verdict rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/core.hpp"

namespace lt::coord {

// A verdict's thresholds: a slowdown is a regression only past `slower_pct` percent and outside `noise` spreads of
// both medians (spreads are median absolute deviations); a speed-up is reported the same way.
struct VerdictRule {
  double slower_pct = 5;
  double noise = 3;
};

// What a nightly run is compared with: the release's figures and its reference checksum.
struct Baseline {
  double median_ms = 0;
  double spread_ms = 0;
  std::string logits_hash;
};

// A night's verdict on one release: faster | same | slower | wrong | failed, with the change and why.
struct Verdict {
  std::string verdict;
  double change_pct = 0;
  std::string reason;
  // True for the verdicts that fail the night (slower, wrong, failed).
  bool bad() const { return verdict == "slower" || verdict == "wrong" || verdict == "failed"; }
};

// The verdict rule: a run that failed is `failed` (`wrong` when it failed its checks: wrong results or a race); a
// valid run whose tokens, staggered logits or logits checksum differ from the release's is `wrong`; otherwise its
// median against the baseline's decides, within the noise band `same`.
Verdict judge(const Baseline& b, const db::Run& now, const VerdictRule& rule);

// A recorded release (db/store.hpp).
using db::Release;
// One release's row of a night (db/store.hpp).
using db::NightRow;

// What export freezes: the job's best valid run for a kind, its checkpoint and the prompts it was judged on.
struct Candidate {
  int64_t job = 0;
  std::string gpu;
  db::Run run;
  db::Checkpoint checkpoint;
  std::string prompts;
  int arch = 0;
};

// A night: its number and a row per release and GPU kind.
struct Night {
  int64_t night = 0;
  std::vector<NightRow> rows;
};

// The releases' core on the coordinator's database; every method is one transaction.
class Releases {
 public:
  explicit Releases(Coordinator& core) : core_(core) {}

  // The job's best valid configuration for `gpu`; FailedPrecondition when it has none.
  Candidate candidate(int64_t job, const std::string& gpu);
  // Records the release of the job's `run` for `gpu`, exported to `directory` with `manifest` (JSON); its id.
  int64_t record(int64_t job, const std::string& gpu, int64_t run, const std::string& directory,
                 const std::string& manifest);
  std::vector<Release> list();
  // Starts a night: for each release named (none: all) and each kind in `gpus` (none: the release's own), a job
  // that measures exactly the release's configuration on its prompts, fresh (nothing reused).
  Night start_night(const std::vector<int64_t>& releases, const std::vector<std::string>& gpus);
  // Judges the night's finished jobs against their releases; rows whose job still runs stay pending.
  Night judge_night(int64_t night, const VerdictRule& rule);
  // Every night's row of the releases of `job`, by release, then night; NotFound for a job it does not know.
  std::vector<NightRow> nights(int64_t job);

 private:
  Coordinator& core_;
};

}  // namespace lt::coord
