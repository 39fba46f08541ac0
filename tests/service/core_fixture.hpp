// The core-level tests' coordinator: a core with the fake compiler on a fresh database, a checkpoint it reads by path,
// one registered h100 worker that reports what the test says, and the releases' core beside it.
#pragma once

#include <fstream>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "coordinator/releases.hpp"
#include "fake_compiler.hpp"
#include "support/test_support.hpp"

namespace lt::test {

struct CoreFixture {
  TempDir dir;
  std::filesystem::path checkpoint = dir / "model.gguf";
  std::unique_ptr<coord::Coordinator> core;
  std::unique_ptr<coord::Releases> releases;
  int64_t worker = 0;

  // A knob space of `points` configurations {"id": i}.
  explicit CoreFixture(int points = 3) {
    std::ofstream(checkpoint) << "GGUF and some bytes";
    coord::Options o;
    o.data_dir = dir / "data";
    o.path_roots = {dir.path()};  // jobs name their checkpoints by path here
    o.replenish_inline = true;
    core = std::make_unique<coord::Coordinator>(dir / "lt.db", o, std::make_unique<FakeCompiler>(points));
    releases = std::make_unique<coord::Releases>(*core);
    db::Worker w;
    w.name = "w";
    w.gpu = "h100";
    w.environment_key = "env-a";
    worker = core->register_worker(w);
  }
  // A grid job on h100; jobs of the same seed judge on the same prompts (and so reuse each other's runs).
  int64_t submit(uint64_t seed = 0) {
    coord::JobSpec s;
    s.path = checkpoint.string();
    s.gpus = {"h100"};
    s.strategy = "grid";
    s.seed = seed;
    return core->submit(s).job.id;
  }
  // Leases everything and reports `run(id)` for configuration `id`; returns the plans run.
  int drain(const std::function<db::Run(int)>& run) {
    int n = 0;
    for (auto ls = core->lease(worker, 8); !ls.empty(); ls = core->lease(worker, 8))
      for (auto& l : ls) {
        core->report(worker, l.plan.id, l.plan.lease, run(nlohmann::json::parse(l.plan.knobs)["id"].get<int>()));
        ++n;
      }
    return n;
  }
  // Releases the job's h100 winner; its id.
  int64_t release(int64_t job) {
    auto c = releases->candidate(job, "h100");
    return releases->record(job, "h100", c.run.id, (dir / "rel").string(), R"({"format":"lane-tune-release"})");
  }
};

}  // namespace lt::test
