// The worker's GPU: its kind, properties and software environment, as nvidia-smi and nvcc report them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace lt::worker {

// One GPU and the software around it.
struct Gpu {
  int index = 0;
  std::string kind;  // a100, h100, h200, l4, ...
  std::string name;  // "NVIDIA H200"
  std::string uuid;  // what CUDA_VISIBLE_DEVICES names it by, for the lanes the worker runs
  std::string driver;
  std::string cuda;  // the driver's CUDA version
  std::string nvcc;  // nvcc --version's release line
  double memory_mib = 0;
  int sm_clock_mhz = 0, mem_clock_mhz = 0;
  int arch = 0;  // compute capability, 90 for 9.0
  int sms = 0;
  bool replay = false;  // answered from a recording, not measured

  nlohmann::json properties() const;
  // What results are measured under: GPU name, driver, CUDA, nvcc, lane-tune version, clocks at start.
  nlohmann::json environment() const;
  // The part of the environment results may be reused under (everything but the clocks).
  std::string environment_key() const;
};

// The kind lane-tune calls a GPU by its name ("NVIDIA H200" -> "h200", "NVIDIA A100-SXM4-80GB" -> "a100").
std::string kind_of(const std::string& name);

// Parses one line of `nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,compute_cap
// --format=csv,noheader`; throws lt::Error when it does not parse.
Gpu parse_nvidia_smi_line(const std::string& line);

// GPU `index`'s clocks now ({"sm_clock_mhz", "mem_clock_mhz"}; empty when nvidia-smi cannot tell).
nlohmann::json read_clocks(int index);

// Detects GPU `index` with nvidia-smi (and nvcc's version); throws lt::Error when there is none.
Gpu detect_gpu(int index);

}  // namespace lt::worker
