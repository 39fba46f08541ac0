// What a worker measures and what it reports: a plan under a lease, and a configuration's result.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lt::worker {

// A prompt a lane runs: tokens to generate after the prompt's tokens.
struct Prompt {
  uint32_t n_gen = 1;
  std::vector<int32_t> tokens;
};

// A plan (one configuration of a job to measure) as the worker holds it under its lease from the coordinator; the
// stored row is db::Plan, what a lane's program runs is the compiler's lane::Schedule.
struct LeasedPlan {
  int64_t plan = 0, lease = 0, job = 0;
  std::string checkpoint;  // content digest
  uint64_t checkpoint_size = 0;
  std::string gpu;
  nlohmann::json knobs;
  uint32_t stage = 0, repetitions = 1, warmup = 1;
  std::vector<Prompt> prompts;
  std::vector<uint64_t> stagger_seeds;
  double time_limit_s = 600;
  // The workload timed `repetitions` times after `warmup` untimed runs: a prompt of `workload_prompt` tokens, then
  // `workload_gen` generated (0, 0: the prompts themselves are timed, as before the workload existed).
  uint32_t workload_prompt = 0, workload_gen = 0;
  bool verify = true;           // the --stagger checks run too; false: screened by speed and the logits checks alone
  bool profile = true;          // every launch timed once (--profile)
  std::string checkpoint_path;  // the coordinator's path to the checkpoint (read in place when this host sees it)
  // A screen's cutoff: the lane stops after the workload's first run when its figure `cutoff_on` (workload, decode,
  // prefill; empty: none) is past cutoff_factor times the best known for the job (`best_ms`, 0: none yet; shared by
  // the worker's plans of one job and lowered as it measures, so that a plan held a while meets a fresh limit).
  std::string cutoff_on;
  double cutoff_factor = 0;
  std::shared_ptr<std::atomic<double>> best_ms = std::make_shared<std::atomic<double>>(0);
  // Raised when the lease is lost (expired, job cancelled or out of time): the runner stops measuring.
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  // Why the link could not read the plan as the coordinator sent it (its knobs are not JSON, say); nullopt: it could.
  std::optional<std::string> unreadable;
};

// Why the worker cannot take plan `p` as sent: the link could not read it, its checkpoint digest is not one (the
// digest names files here), its knobs are not a JSON object, or a prompt has no tokens or a negative one. nullopt when
// it can. Such a plan is reported failed (failure::kBadPlan) without being measured.
std::optional<std::string> why_malformed(const LeasedPlan& p);

// The failure classes a result may carry.
namespace failure {
inline constexpr const char* kCompileError = "compile_error";
inline constexpr const char* kCudaError = "cuda_error";
inline constexpr const char* kDoesNotFit = "does_not_fit";
inline constexpr const char* kWrongResults = "wrong_results";
inline constexpr const char* kRace = "race";
inline constexpr const char* kTimeout = "timeout";
inline constexpr const char* kBadOutput = "bad_output";
inline constexpr const char* kNotRecorded = "not_recorded";
inline constexpr const char* kCancelled = "cancelled";
inline constexpr const char* kBadPlan = "bad_plan";  // the plan as sent cannot be read (why_malformed)
}  // namespace failure

// A measured configuration: timings (median and spread over repetitions), profile, checks, environment. median_ms is
// the decode time per token, prefill_ms the workload prompt's prefill, workload_ms the time to its last token.
struct Result {
  double median_ms = 0, spread_ms = 0, min_ms = 0, max_ms = 0, prefill_ms = 0, tok_per_s = 0, compile_s = 0;
  double workload_ms = 0;
  bool verified = false;                           // the --stagger checks ran and the logits were bit for bit the same
  nlohmann::json cost = nlohmann::json::object();  // seconds by part: build, load, run, checks
  nlohmann::json profile = nlohmann::json::object();
  std::string logits_hash;
  double rel_l2 = 0, argmax_agree = 0;
  bool tokens_equal = false, stagger_equal = false, valid = false;
  std::string reason, failure, error;
  nlohmann::json environment = nlohmann::json::object();

  // An invalid result of class `failure_class` with its reason and, shortened, the output that shows it.
  static Result invalid(std::string failure_class, std::string reason, std::string error = {});
  // Whether a cutoff stopped the workload after its first run (its figures are that run's estimate).
  bool cut_off() const { return cost.is_object() && cost.contains("cutoff_ms"); }
};

// The result's figure for a job's objective (`on`: workload, decode, prefill) in ms; 0 when it has none.
double objective_figure(const std::string& on, const Result& r);

}  // namespace lt::worker
