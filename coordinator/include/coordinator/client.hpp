// A client of the coordinator for the CLI: upload, submit, watch, status, results, best, cancel.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/core.hpp"

namespace lt::coord {

// A failed call: the gRPC status code's name and the coordinator's message.
class CallError : public lt::Error {
 public:
  CallError(std::string code, const std::string& message)
      : lt::Error(code + ": " + message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// The coordinator address a client command uses: --coordinator, else $LT_COORDINATOR, else 127.0.0.1:7117.
std::string default_coordinator();
// The token: --token, else $LT_TOKEN, else none.
std::string default_token();

// A connection to the coordinator; every call throws CallError when the coordinator refuses or is unreachable.
class Client {
 public:
  Client(const std::string& address, const std::string& token, double timeout_s = 30);
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

}  // namespace lt::coord
