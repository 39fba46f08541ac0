// The replay runner: answers plans from a recorded results file instead of a GPU (for strategies and CI).
#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include <xxhash.h>

#include "compiler/error.hpp"
#include "compiler/knobs.hpp"
#include "worker/runner.hpp"

namespace lt::worker {
namespace {

nlohmann::json load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw lt::Error("cannot read the recording " + path.string());
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || j.value("format", "") != "lane-tune-results" || !j.contains("runs") || !j["runs"].is_array())
    throw lt::Error(path.string() + " is not a lane-tune recording (write one with `lane-tune results JOB --json`)");
  if (j.value("version", 0) != 1)
    throw lt::Error(path.string() + ": recording version " + std::to_string(j.value("version", 0)) +
                    " is not the one this lane-tune reads (1)");
  return j;
}

std::string text_of(const nlohmann::json& j) {
  return j.is_string() ? j.get<std::string>() : j.dump();
}

// A configuration's canonical key: a recording made before a knob existed holds that knob at its default (the program
// such a recording measured), so it answers for the configuration with the knob at its default.
std::string key_of(const nlohmann::json& knobs) {
  try {
    return knobs::Knobs::from_json(knobs.is_string() ? nlohmann::json::parse(knobs.get<std::string>()) : knobs).key();
  } catch (const std::exception&) {
    return text_of(knobs);
  }
}

// A recorded run as a worker's result.
Result to_result(const nlohmann::json& r) {
  Result x;
  x.median_ms = r.value("median_ms", 0.0);
  x.spread_ms = r.value("spread_ms", 0.0);
  x.min_ms = r.value("min_ms", 0.0);
  x.max_ms = r.value("max_ms", 0.0);
  x.prefill_ms = r.value("prefill_ms", 0.0);
  x.tok_per_s = r.value("tok_per_s", 0.0);
  x.compile_s = r.value("compile_s", 0.0);
  x.profile = r.value("profile", nlohmann::json::object());
  x.logits_hash = r.value("logits_hash", "");
  x.rel_l2 = r.value("rel_l2", 0.0);
  x.argmax_agree = r.value("argmax_agree", 0.0);
  x.tokens_equal = r.value("tokens_equal", false);
  x.stagger_equal = r.value("stagger_equal", false);
  x.valid = r.value("valid", false);
  x.reason = r.value("reason", "");
  x.failure = r.value("failure", "");
  x.error = r.value("error", "");
  x.environment = r.value("environment", nlohmann::json::object());
  x.environment["replay"] = true;
  if (!x.valid && x.reason.empty()) x.reason = "recorded invalid";
  if (x.valid) x.failure.clear();
  return x;
}

// A synthetic recording's made-up but deterministic measurement of a configuration: its time from the hash of its key,
// one in eleven a race, one in thirteen too big for the device.
nlohmann::json synthetic_run(const std::string& gpu, const nlohmann::json& knobs, const std::string& key) {
  uint64_t h = XXH64(key.data(), key.size(), 7);
  double ms = 0.5 + double(h % 1000) / 400.0;
  nlohmann::json r = {
      {"gpu", gpu},
      {"knobs", knobs},
      {"stage", 0},
      {"repetitions", 10},
      {"median_ms", ms},
      {"spread_ms", ms * 0.01},
      {"min_ms", ms * 0.98},
      {"max_ms", ms * 1.05},
      {"prefill_ms", ms * 3},
      {"tok_per_s", 1000 / ms},
      {"compile_s", 2.0},
      {"profile", {{"total_us", ms * 1000}}},
      {"logits_hash", "0000000000000000"},
      {"rel_l2", 1e-6},
      {"argmax_agree", 1.0},
      {"tokens_equal", true},
      {"stagger_equal", true},
      {"valid", true},
      {"reason", ""},
      {"failure", ""},
      {"error", ""},
      {"worker", "synthetic"},
      {"environment",
       {{"gpu", "Synthetic " + gpu}, {"driver", "0"}, {"cuda", "0"}, {"nvcc", "none"}, {"lane_tune", "synthetic"}}}};
  if (h % 11 == 0) {
    r["valid"] = false;
    r["stagger_equal"] = false;
    r["failure"] = "race";
    r["reason"] = "the logits differ under --stagger 1 (a race)";
  } else if (h % 13 == 0) {
    r["valid"] = false;
    r["failure"] = "does_not_fit";
    r["reason"] = "the lane does not fit the device";
  }
  return r;
}

// Runs indexed by GPU kind and knobs; several repetitions of a configuration kept apart.
class ReplayRunner : public Runner {
 public:
  ReplayRunner(const std::filesystem::path& path, double delay_ms) : delay_ms_(delay_ms) {
    auto recording = load(path);
    if (recording.value("synthetic", false) && recording["runs"].empty()) synthetic_ = recording.value("gpu", "");
    for (auto& r : recording["runs"])
      runs_[{r.value("gpu", ""), key_of(r.at("knobs"))}][r.value("repetitions", 0u)] = r;
  }
  bool needs_checkpoint() const override { return false; }
  std::function<Result()> prepare(const Plan& p, const std::filesystem::path&) override {
    return [this, p] {
      auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(delay_ms_);
      while (std::chrono::steady_clock::now() < end && !*p.cancelled)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (*p.cancelled) return Result::invalid(failure::kCancelled, "the lease was lost");
      if (!synthetic_.empty()) {
        if (p.gpu != synthetic_)
          return Result::invalid(failure::kNotRecorded,
                                 "the synthetic recording is of " + synthetic_ + ", not " + p.gpu);
        const std::string key = key_of(p.knobs);
        return to_result(synthetic_run(synthetic_, p.knobs, key));
      }
      auto it = runs_.find({p.gpu, key_of(p.knobs)});
      if (it == runs_.end())
        return Result::invalid(failure::kNotRecorded, "the recording has no run of this configuration on " + p.gpu);
      auto exact = it->second.find(p.repetitions);
      return to_result(exact != it->second.end() ? exact->second : it->second.rbegin()->second);
    };
  }

 private:
  double delay_ms_;
  std::string synthetic_;  // a synthetic recording's GPU kind: every configuration answered by synthetic_run
  std::map<std::pair<std::string, std::string>, std::map<uint32_t, nlohmann::json>> runs_;
};
}  // namespace

std::unique_ptr<Runner> replay_runner(const std::filesystem::path& recording, double delay_ms) {
  return std::make_unique<ReplayRunner>(recording, delay_ms);
}

Gpu recorded_gpu(const std::filesystem::path& recording) {
  auto j = load(recording);
  if (j["runs"].empty() && j.value("synthetic", false)) j["runs"].push_back(synthetic_run(j.value("gpu", ""), {}, ""));
  if (j["runs"].empty()) throw lt::Error(recording.string() + " records no runs");
  auto& r = j["runs"][0];
  auto env = r.value("environment", nlohmann::json::object());
  Gpu g;
  g.kind = r.value("gpu", "");
  g.name = env.value("gpu", g.kind);
  g.driver = env.value("driver", "");
  g.cuda = env.value("cuda", "");
  g.nvcc = env.value("nvcc", "");
  g.sm_clock_mhz = env.value("sm_clock_mhz", 0);
  g.mem_clock_mhz = env.value("mem_clock_mhz", 0);
  g.replay = true;
  return g;
}

}  // namespace lt::worker
