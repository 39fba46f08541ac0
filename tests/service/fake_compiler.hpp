// A stand-in for the compiler in the coordinator's unit tests: any file that starts with "GGUF" is a checkpoint
// whose knob space is `points` configurations {"id": i}.
#pragma once

#include <fstream>

#include "compiler/error.hpp"
#include "coordinator/space.hpp"

namespace lt::test {

// A knob space of `n` points.
class FakeSpace : public coord::SearchSpace {
 public:
  explicit FakeSpace(int n) : n_(n) {}
  std::vector<nlohmann::json> enumerate() const override {
    std::vector<nlohmann::json> v;
    for (int i = 0; i < n_; ++i) v.push_back({{"id", i}});
    return v;
  }
  size_t size() const override { return size_t(n_); }
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

// The fake compiler.
class FakeCompiler : public coord::Compiler {
 public:
  explicit FakeCompiler(int points) : points_(points) {}
  coord::CheckpointInfo inspect(const std::filesystem::path& p) override {
    std::ifstream in(p, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    if (std::string(magic, 4) != "GGUF") throw lt::Error(p.string() + " is not a GGUF file");
    return {"qwen3", "fake", 1000};
  }
  std::unique_ptr<coord::SearchSpace> space(const std::filesystem::path&, const coord::GpuKind&) override {
    return std::make_unique<FakeSpace>(points_);
  }

 private:
  int points_;
};

}  // namespace lt::test
