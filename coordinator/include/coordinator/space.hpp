// What the coordinator asks of the compiler: a checkpoint's description and its knob space per GPU kind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lt::coord {

// A GPU kind the coordinator can tune for: its name, multiprocessors and compute capability.
struct GpuKind {
  std::string name;
  int sms = 0;
  int arch = 0;
};

// The GPU kinds lane-tune knows (a100, h100, h200, l4, ...); nullptr for an unknown name.
const GpuKind* find_gpu_kind(const std::string& name);
std::vector<std::string> gpu_kind_names();

// A knob space as the search strategies see it: configurations as JSON, each with its canonical key.
class SearchSpace {
 public:
  virtual ~SearchSpace() = default;
  // Every valid configuration, in a fixed order; how many there are; whether `knobs` is one of them.
  virtual std::vector<nlohmann::json> enumerate() const = 0;
  virtual size_t size() const = 0;
  virtual bool contains(const nlohmann::json& knobs) const = 0;
  // A valid configuration drawn at random.
  virtual nlohmann::json sample(std::mt19937_64& rng) const = 0;
  // The configuration's canonical text (what results are stored and reused by).
  virtual std::string key(const nlohmann::json& knobs) const = 0;
};

// What a checkpoint is, as far as the coordinator needs to know.
struct CheckpointInfo {
  std::string architecture;
  std::string name;
  uint32_t vocab = 0;
};

// The compiler's side of the coordinator: reads checkpoints and describes their knob spaces.
class Compiler {
 public:
  virtual ~Compiler() = default;
  // Recognizes the checkpoint; throws lt::Error when it is not a GGUF file lane-tune can compile.
  virtual CheckpointInfo inspect(const std::filesystem::path& checkpoint) = 0;
  virtual std::unique_ptr<SearchSpace> space(const std::filesystem::path& checkpoint, const GpuKind& gpu) = 0;
};

// The real compiler (lt::gguf, lt::model, lt::knobs).
std::unique_ptr<Compiler> compiler();

}  // namespace lt::coord
