// What the coordinator asks of the compiler: a checkpoint's description and its knob space per GPU kind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lt::knobs {
struct Space;
}

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

// One knob of a space as the search sees it: its name and its values, in the space's order.
struct Dimension {
  std::string name;
  std::vector<nlohmann::json> values;
};

// A knob space as the search strategies see it: configurations as JSON, each with its canonical key, reached by
// ordinal (the grid walks them) or drawn at random; nothing here lists the whole space.
class SearchSpace {
 public:
  virtual ~SearchSpace() = default;
  // The knobs that vary and their values (the cost model's features, the mutations' choices).
  virtual std::vector<Dimension> dimensions() const = 0;
  // How many valid configurations there are, exactly.
  virtual uint64_t size() const = 0;
  // How many ordinals there are: every valid configuration has one, and some ordinals are no valid configuration.
  virtual uint64_t raw_size() const = 0;
  // The configuration at `ordinal` in the space's fixed order (the grid's), or nullopt when that ordinal breaks a
  // constraint. REQUIRES: ordinal < raw_size().
  virtual std::optional<nlohmann::json> at(uint64_t ordinal) const = 0;
  // Whether `knobs` is one of the space's configurations (knobs left out take their defaults).
  virtual bool contains(const nlohmann::json& knobs) const = 0;
  // A valid configuration drawn at random.
  virtual nlohmann::json sample(std::mt19937_64& rng) const = 0;
  // The configuration's canonical text (what results are stored and reused by): every knob, sorted.
  virtual std::string key(const nlohmann::json& knobs) const = 0;
};

// What a checkpoint is, as far as the coordinator needs to know.
struct CheckpointInfo {
  std::string architecture;
  std::string name;
  uint32_t vocab = 0;
  uint32_t context = 0;  // the lane's context: the model's, at most 4096 (lt::knobs::lane_context)
  uint32_t trained_context = 0;  // the model's own: the most positions a job may ask its lanes to hold
};

// The compiler's side of the coordinator: reads checkpoints and describes their knob spaces.
class Compiler {
 public:
  virtual ~Compiler() = default;
  // Recognizes the checkpoint; throws lt::Error when it is not a GGUF file lane-tune can compile.
  virtual CheckpointInfo inspect(const std::filesystem::path& checkpoint) = 0;
  // The knob space for `gpu` with lanes of `context` positions (0: the model's context, at most 4096).
  virtual std::unique_ptr<SearchSpace> space(const std::filesystem::path& checkpoint, const GpuKind& gpu,
                                             uint32_t context) = 0;
};

// The real compiler (lt::gguf, lt::model, lt::knobs).
std::unique_ptr<Compiler> compiler();

// A search space over lt::knobs' space `s`; `keep` holds what s.model points into (the checkpoint's gguf::File).
std::unique_ptr<SearchSpace> knob_space(const knobs::Space& s, std::shared_ptr<const void> keep);

}  // namespace lt::coord
