// The job history and comparisons of two jobs, on what each job measured itself: nightly, reused and replayed runs
// are left out (the run_provenance view, db/SCHEMA.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/core.hpp"

namespace lt::coord {

// One row of a comparison on one GPU kind: the two jobs' best configurations (`best`), or one configuration that both
// measured themselves (the same configuration key), with each job's figures; a side without figures has no verified
// run of its own (the best row only).
struct ComparedRow {
  std::string gpu;
  bool best = false;
  std::optional<db::Figures> job, against;
};

// A job compared with an earlier one on the GPU kinds both tuned: each job's history row per kind (which tells what
// was left out), then per kind the best row and the configurations both measured, by this job's objective.
struct Comparison {
  int64_t job = 0, against = 0;
  std::vector<db::HistoryRow> job_rows, against_rows;
  std::vector<ComparedRow> rows;
};

// The job history's core on the coordinator's database; every method is one read under the coordinator's lock.
class JobHistory {
 public:
  explicit JobHistory(Coordinator& core) : core_(core) {}

  // The history's rows that `f` selects, oldest job first. Throws InvalidArgument for a GPU kind it does not know or
  // a checkpoint that is not lowercase hex digits (a digest, or its first digits).
  std::vector<db::HistoryRow> list(const db::HistoryFilter& f);
  // Compares `job` with `against` (0: the latest job before it on the same checkpoint that tuned one of its GPU
  // kinds, never a nightly one) on `gpu` (empty: every kind both tuned). Throws NotFound for a job it does not know
  // or when no earlier job qualifies; InvalidArgument for a nightly job, a job compared with itself or an unknown GPU
  // kind; FailedPrecondition when the two jobs tuned no GPU kind in common (or not `gpu`).
  Comparison compare(int64_t job, int64_t against, const std::string& gpu);

 private:
  Coordinator& core_;
};

}  // namespace lt::coord
