// A stand-in for the compiler in the coordinator's unit tests: any file that starts with "GGUF" is a checkpoint
// whose knob space is `points` configurations {"id": i}.
#pragma once

#include <fstream>

#include "compiler/error.hpp"
#include "coordinator/space.hpp"

namespace lt::test {

// A knob space of `n` points, one knob "id" of n values, every ordinal a point.
class FakeSpace : public coord::SearchSpace {
 public:
  explicit FakeSpace(int n) : n_(n) {}
  std::vector<coord::Dimension> dimensions() const override {
    coord::Dimension d{"id", {}};
    for (int i = 0; i < n_; ++i) d.values.push_back(i);
    return {d};
  }
  uint64_t size() const override { return uint64_t(n_); }
  uint64_t raw_size() const override { return uint64_t(n_); }
  std::optional<nlohmann::json> at(uint64_t ordinal) const override { return nlohmann::json{{"id", int(ordinal)}}; }
  bool contains(const nlohmann::json& k) const override {
    return k.is_object() && k.size() == 1 && k.contains("id") && k["id"].is_number_integer() && k["id"] >= 0 &&
           k["id"] < n_;
  }
  nlohmann::json sample(std::mt19937_64& rng) const override {
    return {{"id", std::uniform_int_distribution<int>(0, n_ - 1)(rng)}};
  }
  std::string key(const nlohmann::json& k) const override { return k.dump(); }

 private:
  int n_;
};

// The fake compiler: checkpoints of `context` positions (the lane's).
class FakeCompiler : public coord::Compiler {
 public:
  explicit FakeCompiler(int points, uint32_t context = 4096) : points_(points), context_(context) {}
  coord::CheckpointInfo inspect(const std::filesystem::path& p) override {
    std::ifstream in(p, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    if (std::string(magic, 4) != "GGUF") throw lt::Error(p.string() + " is not a GGUF file");
    return {"qwen3", "fake", 1000, context_};
  }
  std::unique_ptr<coord::SearchSpace> space(const std::filesystem::path&, const coord::GpuKind&, uint32_t) override {
    return std::make_unique<FakeSpace>(points_);
  }

 private:
  int points_;
  uint32_t context_;
};

}  // namespace lt::test
