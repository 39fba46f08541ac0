// A client of the coordinator's Releases service for `lane-tune export` and `lane-tune nightly`.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/client.hpp"
#include "coordinator/releases.hpp"

namespace lt::coord {

// A connection to the Releases service; every call throws CallError when the coordinator refuses or is unreachable.
class ReleaseClient {
 public:
  ReleaseClient(const std::string& address, const std::string& token, double timeout_s = 60,
                const std::string& tls_ca = default_tls_ca());
  ~ReleaseClient();

  Candidate candidate(int64_t job, const std::string& gpu);
  int64_t record(int64_t job, const std::string& gpu, int64_t run, const std::string& directory,
                 const std::string& manifest);
  std::vector<Release> list();
  Night start_night(const std::vector<int64_t>& releases, const std::vector<std::string>& gpus);
  Night judge_night(int64_t night, const VerdictRule& rule);
  std::vector<NightRow> nights(int64_t job);
  // Writes the stored checkpoint with `digest` to `path` (through a temporary file, renamed when complete).
  void fetch_checkpoint(const std::string& digest, const std::filesystem::path& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lt::coord
