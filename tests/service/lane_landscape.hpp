// The strategies' test bench: a real knob space (a synthesized tiny-qwen3 on the h200), optionally restricted to a
// list of its points (Kernel Tuner's simulation mode), and a strategy driven against the replay runner's lane
// landscape (structured times with per-launch profiles) as a coordinator would drive it, without one.
#pragma once

#include <fstream>
#include <map>
#include <set>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "coordinator/strategy.hpp"
#include "support/test_support.hpp"
#include "worker/runner.hpp"

namespace lt::test {

// A synthesized tiny-qwen3 checkpoint, its real knob space on the h200, and a lane-landscape recording.
struct Bench {
  TempDir dir;
  std::filesystem::path checkpoint = dir / "tiny.gguf";
  std::filesystem::path recording = dir / "lane.json";
  std::unique_ptr<coord::SearchSpace> space;
  std::unique_ptr<worker::Runner> runner;

  Bench() {
    synth::Options o;
    o.preset = "tiny-qwen3";
    o.seed = 1;
    synth::write(o, checkpoint);
    space = coord::compiler()->space(checkpoint, *coord::find_gpu_kind("h200"), 0);
    std::ofstream(recording) << R"({"format": "lane-tune-results", "version": 1, "job": 0, "synthetic": true,
                                   "gpu": "h200", "landscape": "lane", "runs": []})";
    runner = worker::replay_runner(recording, 0);
  }

  // The proposal measured by the lane landscape on the default workload, as a strategy sees the result.
  coord::Observation measure(const coord::Proposal& p, coord::Objective objective) const {
    worker::LeasedPlan plan;
    plan.gpu = "h200";
    plan.knobs = p.knobs;
    plan.stage = p.stage;
    plan.repetitions = p.repetitions;
    plan.verify = p.verify;
    plan.profile = p.profile;
    plan.workload_prompt = 512;
    plan.workload_gen = 128;
    auto r = runner->prepare(plan, {})();
    coord::Observation o;
    o.key = p.key;
    o.knobs = p.knobs;
    o.stage = p.stage;
    o.verify = p.verify;
    o.valid = r.valid;
    o.verified = r.valid && r.verified;
    o.decode_ms = r.median_ms;
    o.prefill_ms = r.prefill_ms;
    o.workload_ms = r.workload_ms;
    o.objective_ms = !r.valid                                 ? 0
                     : objective == coord::Objective::Decode  ? r.median_ms
                     : objective == coord::Objective::Prefill ? r.prefill_ms
                                                              : r.workload_ms;
    o.profile = r.profile;
    o.failure = r.failure;
    return o;
  }
};

// A knob space restricted to the listed points of another (a recorded job's configurations).
class ListSpace : public coord::SearchSpace {
 public:
  ListSpace(const coord::SearchSpace& full, std::vector<nlohmann::json> points)
      : full_(full), points_(std::move(points)) {
    for (auto& p : points_) keys_.insert(full_.key(p));
  }
  std::vector<coord::Dimension> dimensions() const override { return full_.dimensions(); }
  uint64_t size() const override { return points_.size(); }
  uint64_t raw_size() const override { return points_.size(); }
  std::optional<nlohmann::json> at(uint64_t i) const override { return points_.at(i); }
  bool contains(const nlohmann::json& k) const override { return full_.contains(k) && keys_.count(full_.key(k)); }
  nlohmann::json sample(std::mt19937_64& rng) const override {
    return points_[std::uniform_int_distribution<size_t>(0, points_.size() - 1)(rng)];
  }
  std::string key(const nlohmann::json& k) const override { return full_.key(k); }

 private:
  const coord::SearchSpace& full_;
  std::vector<nlohmann::json> points_;
  std::set<std::string> keys_;
};

// `n` distinct points of `space` drawn with `seed`.
inline std::vector<nlohmann::json> draw(const coord::SearchSpace& space, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<std::string> seen;
  std::vector<nlohmann::json> v;
  while (v.size() < n) {
    auto k = space.sample(rng);
    if (seen.insert(space.key(k)).second) v.push_back(k);
  }
  return v;
}

}  // namespace lt::test
