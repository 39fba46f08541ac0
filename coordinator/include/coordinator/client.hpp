// A client of the coordinator for the CLI: upload, submit, watch, status, results, best, cancel.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/core.hpp"

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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How a run came out: valid under the full checks, valid under the screen's (timed, logits checked, no --stagger),
// or failed.
enum class RunVerdict { Verified, Screened, Failed };
const char* to_string(RunVerdict v);
RunVerdict verdict_of(const db::Run& r);

// The best run's figures side by side: "2.91 ms/tok · 6,300 prefill tok/s · 1.2 s workload".
std::string best_figures(double decode_ms, double prefill_tok_s, double workload_ms);
// A job's progress in one line: per GPU kind what was measured of what the strategy plans, verified, failed, the
// best verified run's figures; time left.
std::string progress_line(const JobStatus& s);
// A job's state as a few lines for `lane-tune status`.
std::string describe(const JobStatus& s);
// Results as a table for a terminal.
std::string results_table(const std::vector<db::Run>& runs);
// Results as JSON: the recording format the replay runner reads (`{"format": "lane-tune-results", "version": 1,
// "job": N, "runs": [...]}`, knobs, profile and environment as objects).
nlohmann::json results_json(int64_t job, const std::vector<db::Run>& runs);
// A time budget written as 90, 90s, 30m or 2h; throws lt::Error otherwise.
double parse_duration(const std::string& text);

}  // namespace lt::coord
