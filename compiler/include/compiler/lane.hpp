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

// A compiled lane: the CUDA program, the host runtime it is linked with, the sidecar it reads its computed constants
// from, and a description of what was emitted (forms, launches, knobs) as JSON.
struct Program {
  std::string cu;
  std::string runtime;  // the host runtime's source: runtime_source(), the same for every lane
  std::vector<uint8_t> sidecar;
  nlohmann::json description;
};

// Emits the lane for `file` under `k` (checked against the space for `t`); throws lt::Error for bad knobs or an
// unsupported model.
Program compile(const gguf::File& file, const model::Model& m, const knobs::Knobs& k, const knobs::Target& t);

// The host runtime's source (kernels/host_api.cuh and the host*.cuh behind it): one file for every lane, compiled
// apart into an object each lane's program is linked with.
std::string runtime_source();

// The files a lane directory holds.
inline constexpr const char* kSource = "lane.cu";
inline constexpr const char* kRuntimeSource = "lane_host.cu";
inline constexpr const char* kSidecar = "lane.sidecar";
inline constexpr const char* kDescription = "lane.json";
inline constexpr const char* kBinary = "lane";

// Writes lane.cu, lane_host.cu, lane.sidecar and lane.json into `dir` (created if needed).
void write(const Program& p, const std::filesystem::path& dir);

// Where `build` keeps the host runtime's objects unless told: ~/.cache/lane-tune/lanes/runtime.
std::filesystem::path default_runtime_cache();

// Compiles `dir`/lane.cu with nvcc for sm_`arch` into `dir`/lane, linked with the object of its host runtime
// (`dir`/lane_host.cu); returns the binary's path. The object is compiled once into `cache`, named by the hash of the
// runtime's source, its nvcc command and nvcc itself, and every later lane with the same runtime reuses it. Throws
// lt::Error with nvcc's output when it fails; `log` receives nvcc's output either way.
std::filesystem::path build(const std::filesystem::path& dir, int arch, std::string* log = nullptr,
                            const std::filesystem::path& cache = default_runtime_cache());

// The host runtime's object for `source` (a lane's lane_host.cu) and sm_`arch`: the one in `cache` when it is there,
// else compiled into it first (`log` receives nvcc's output then). Safe while other processes build into `cache`.
std::filesystem::path runtime_object(const std::filesystem::path& source, int arch, const std::filesystem::path& cache,
                                     std::string* log = nullptr);

// The nvcc command lines `build` runs: the runtime's object `object` compiled from `source` (its flags are in the
// runtime cache's key), and the lane's program in `dir` linked with `object`.
std::vector<std::string> nvcc_runtime_command(const std::string& source, const std::string& object, int arch);
std::vector<std::string> nvcc_command(const std::filesystem::path& dir, int arch, const std::string& object);

// The shell commands that build a lane's directory by hand, without the cache, for sm_`arch`: a release's README.
std::string build_commands(int arch);

}  // namespace lt::lane
