// The tuning service's records as the CLI's tables: jobs, runs, winners, workers, releases and nights. Each view
// decides its columns (who they are for, how figures are scaled); table.hpp renders them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/core.hpp"
#include "coordinator/history.hpp"
#include "coordinator/releases.hpp"
#include "output/table.hpp"

namespace lt::cli {

// Jobs, a row per job and GPU kind: state, checkpoint, what was measured of what is planned, the best verified run's
// figures, time left. A job without GPU kinds has a row of its own.
Table jobs_table(const std::vector<coord::JobStatus>& jobs);
// One job's table with its particulars under it for people: checkpoint, strategy, objective, workload, message,
// each GPU kind's search note and best knobs.
Table job_table(const coord::JobStatus& job);
// A job's progress in one line (`submit --wait`'s live line): per GPU kind what was measured of what the strategy
// plans, verified, failed, the best verified run's figures; time left.
std::string progress_line(const coord::JobStatus& s);

// Runs, one a row: ids, verdict and flags (reused, replayed, cut off), figures scaled, failure and reason, and for
// people the knobs that differ from the winner of the run's GPU kind (`winners`: best's answer; where a kind has no
// winner, from the first of its runs listed). Programs get every knob and every figure unscaled.
Table results_table(const std::vector<db::Run>& runs, const std::vector<db::Run>& winners);
// The winners, a row per GPU kind: figures side by side, and for people the knobs that differ from the defaults.
Table best_table(const std::vector<db::Run>& winners);
// A knob's value as people read it: strings bare ("int8"), the rest as JSON ("16", "true").
std::string knob_text(const nlohmann::json& v);
// The knobs of `knobs` whose values differ from `reference`'s (or that it lacks), as `name=value ...` in the order of
// `knobs`; empty when none differ. Both are JSON objects; anything else compares as text.
std::string knob_changes(const nlohmann::json& knobs, const nlohmann::json& reference);

// The coordinator's workers: id, name, GPU kind, state, the age of the last call, leases held, registered.
Table workers_table(const std::vector<coord::WorkerStatus>& workers);
// The recorded releases: job, kind, baseline figures, checksum, directory.
Table releases_table(const std::vector<coord::Release>& releases);
// A night's rows: release, kind, baseline and now with their spreads, change, verdict and why.
Table night_table(const coord::Night& night);

// The job history, a row per job and GPU kind, oldest first: the checkpoint, the objective, how the job's runs came
// about (measured, reused, replayed), its best verified run of those it measured itself, and the change of that best
// objective against the previous row of the same checkpoint, GPU kind and objective.
Table history_table(const std::vector<db::HistoryRow>& rows);
// A comparison: per GPU kind the two jobs' best configurations, then each configuration both measured, with the
// objective, decode and prefill side by side and each figure's speed-up (over 1: this job is faster); notes say what
// was left out (reused, replayed, nightly) and where the jobs time different things.
Table compare_table(const coord::Comparison& c);
// The speed-up of `now` over `before` for a figure where lower is better (times): before / now; 0 when either is
// missing (0).
double speedup_of_time(double now_ms, double before_ms);

}  // namespace lt::cli
