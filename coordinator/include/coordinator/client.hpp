// A client of the coordinator for the CLI: upload, submit, watch, status, results, best, cancel, workers.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/core.hpp"
#include "coordinator/history.hpp"

namespace grpc {
class ChannelCredentials;
}

namespace lt::coord {

// A failed call: the gRPC status code's name and the coordinator's message.
class CallError : public lt::Error {
 public:
  CallError(std::string code, const std::string& message) : lt::Error(code + ": " + message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// The coordinator address a client command uses: --coordinator, else $LT_COORDINATOR, else 127.0.0.1:7117.
std::string default_coordinator();
// The token: --token, else $LT_TOKEN, else none.
std::string default_token();
// The CA certificate (PEM file) a TLS coordinator is checked against: --tls-ca, else $LT_TLS_CA, else none
// (plaintext).
std::string default_tls_ca();

// A connection to the coordinator; every call throws CallError when the coordinator refuses or is unreachable.
class Client {
 public:
  Client(const std::string& address, const std::string& token, double timeout_s = 30,
         const std::string& tls_ca = default_tls_ca());
  ~Client();

  // Uploads a checkpoint; returns its content digest. `progress` sees bytes sent so far.
  std::string upload(const std::filesystem::path& path, const std::function<void(uint64_t, uint64_t)>& progress = {});
  JobStatus submit(const JobSpec& spec);
  // Calls `each` for every change of the job until it ends (or `each` returns false).
  void watch(int64_t job, const std::function<bool(const JobStatus&)>& each);
  std::vector<JobStatus> list();
  JobStatus status(int64_t job);
  std::vector<db::Run> results(int64_t job, const std::string& gpu, uint32_t top);
  std::vector<db::Run> best(int64_t job, const std::string& gpu);
  JobStatus cancel(int64_t job);
  // The coordinator's workers: every GPU kind's (empty `gpu`) or one kind's; those gone too with `include_gone`.
  std::vector<WorkerStatus> workers(const std::string& gpu, bool include_gone);
  // The job history: every job's search per GPU kind on the checkpoint whose digest starts with `checkpoint` (empty:
  // every checkpoint) and on `gpu` (empty: every kind), oldest first; nightly jobs left out.
  std::vector<db::HistoryRow> history(const std::string& checkpoint, const std::string& gpu);
  // `job` compared with `against` (0: the latest earlier job on its checkpoint) on `gpu` (empty: every kind both
  // tuned), on what each measured itself.
  Comparison compare(int64_t job, int64_t against, const std::string& gpu);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How a run came out: valid under the full checks, valid under the screen's (timed, logits checked, no --stagger),
// or failed.
enum class RunVerdict { Verified, Screened, Failed };
const char* to_string(RunVerdict v);
RunVerdict verdict_of(const db::Run& r);

// Whether a cutoff stopped the run after its workload's first run (its figures are that run's estimate).
bool cut_off(const db::Run& r);
// Whether a replay worker answered the run from a recording (no GPU measured it): its environment says "replay": true,
// as the database's run_provenance view reads it too.
bool replayed(const db::Run& r);
// Results as JSON: the recording format the replay runner reads (`{"format": "lane-tune-results", "version": 1,
// "job": N, "runs": [...]}`, knobs, profile and environment as objects); without `with_profiles`, no run's profile
// (the ~1,000 lines of a whole lane's launches).
nlohmann::json results_json(int64_t job, const std::vector<db::Run>& runs, bool with_profiles = true);
// A time budget written as 90, 90s, 30m or 2h; throws lt::Error otherwise.
double parse_duration(const std::string& text);

}  // namespace lt::coord
