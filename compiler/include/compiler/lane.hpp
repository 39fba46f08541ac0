// A lane: the CUDA program the compiler emits for one checkpoint and one knob configuration, and its build.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"

namespace lt::lane {

// The checkpoint a program is compiled against: its size and the digest of everything before its data section.
struct Checkpoint {
  uint64_t size = 0;
  uint64_t data_start = 0;
  uint64_t digest = 0;
};

// A compiled lane: the CUDA program, the sidecar it reads its computed constants from, and a description of what
// was emitted (forms, launches, knobs) as JSON.
struct Program {
  std::string cu;
  std::vector<uint8_t> sidecar;
  nlohmann::json description;
};

// Emits the lane for `file` under `k` (checked against the space for `t`); throws lt::Error for bad knobs or an
// unsupported model.
Program compile(const gguf::File& file, const model::Model& m, const knobs::Knobs& k, const knobs::Target& t);

// The files a lane directory holds.
inline constexpr const char* kSource = "lane.cu";
inline constexpr const char* kSidecar = "lane.sidecar";
inline constexpr const char* kDescription = "lane.json";
inline constexpr const char* kBinary = "lane";

// Writes lane.cu, lane.sidecar and lane.json into `dir` (created if needed).
void write(const Program& p, const std::filesystem::path& dir);

// Compiles `dir`/lane.cu with nvcc for sm_`arch` into `dir`/lane; returns the binary's path. Throws lt::Error with
// nvcc's output when it fails; `log` receives nvcc's output either way.
std::filesystem::path build(const std::filesystem::path& dir, int arch, std::string* log = nullptr);

// The nvcc command line `build` runs (for the compile cache's key and for the record).
std::vector<std::string> nvcc_command(const std::filesystem::path& dir, int arch);

}  // namespace lt::lane
