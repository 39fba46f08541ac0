// The replay runner: answers plans from a recorded results file instead of a GPU (for strategies and CI), or from a
// synthetic landscape: a made-up but deterministic measurement of every configuration.
#include <chrono>
#include <cmath>
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
  const std::string landscape = j.value("landscape", "hash");
  if (landscape != "hash" && landscape != "lane")
    throw lt::Error(path.string() + ": unknown synthetic landscape '" + landscape + "' (hash, lane)");
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

// The workload a plan times: its own, or (plans from before the workload) the default's.
std::pair<uint32_t, uint32_t> workload_of(const LeasedPlan& p) {
  if (p.workload_gen > 0) return {p.workload_prompt, p.workload_gen};
  return {512, 128};
}

// A recorded run as the answer to `p`: a screen (verify false) runs no --stagger, so it is not verified and a race
// goes unseen; the workload's time is derived from the prefill and the decode steps where the recording has none.
Result to_result(const nlohmann::json& r, const LeasedPlan& p) {
  Result x;
  x.median_ms = r.value("median_ms", 0.0);
  x.spread_ms = r.value("spread_ms", 0.0);
  x.min_ms = r.value("min_ms", 0.0);
  x.max_ms = r.value("max_ms", 0.0);
  x.prefill_ms = r.value("prefill_ms", 0.0);
  x.tok_per_s = r.value("tok_per_s", 0.0);
  x.compile_s = r.value("compile_s", 0.0);
  x.workload_ms = r.value("workload_ms", 0.0);
  x.profile = p.profile ? r.value("profile", nlohmann::json::object()) : nlohmann::json::object();
  x.cost = r.value("cost", nlohmann::json::object());
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
  if (p.verify) {
    // Recordings from before screening ran the full checks on every run.
    x.verified = x.valid && r.value("verified", true) && x.stagger_equal;
  } else {
    x.verified = false;
    x.stagger_equal = false;
    if (x.failure == "race") {  // only --stagger sees a race
      x.valid = true;
      x.failure.clear();
      x.reason.clear();
    }
  }
  if (x.workload_ms == 0 && x.valid) {
    auto [prompt, gen] = workload_of(p);
    (void)prompt;
    x.workload_ms = x.prefill_ms + double(gen - 1) * x.median_ms;
  }
  return x;
}

// The environment a synthetic recording's runs report.
nlohmann::json synthetic_environment(const std::string& gpu) {
  return {{"gpu", "Synthetic " + gpu}, {"driver", "0"}, {"cuda", "0"}, {"nvcc", "none"}, {"lane_tune", "synthetic"}};
}

// A synthetic recording's valid run of `knobs` on `gpu`: decode ms per token, prefill ms, the decode step's profile
// (the spreads and the rest made up around them).
nlohmann::json synthetic_record(const std::string& gpu, const nlohmann::json& knobs, double decode_ms,
                                double prefill_ms, double spread, nlohmann::json profile) {
  return {{"gpu", gpu},
          {"knobs", knobs},
          {"stage", 0},
          {"repetitions", 10},
          {"median_ms", decode_ms},
          {"spread_ms", decode_ms * spread},
          {"min_ms", decode_ms * (1 - 2 * spread)},
          {"max_ms", decode_ms * (1 + 5 * spread)},
          {"prefill_ms", prefill_ms},
          {"tok_per_s", 1000 / decode_ms},
          {"compile_s", 2.0},
          {"profile", std::move(profile)},
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
          {"environment", synthetic_environment(gpu)}};
}

// The hash landscape's made-up but deterministic measurement of a configuration: its time from the hash of its key,
// one in eleven a race, one in thirteen too big for the device.
nlohmann::json synthetic_run(const std::string& gpu, const nlohmann::json& knobs, const std::string& key) {
  uint64_t h = XXH64(key.data(), key.size(), 7);
  double ms = 0.5 + double(h % 1000) / 400.0;
  nlohmann::json r = synthetic_record(gpu, knobs, ms, ms * 3, 0.01, {{"total_us", ms * 1000}});
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

// The lane landscape: a made-up lane of 8 layers whose every launch's time follows from the knobs the way the
// measured lanes' do (bench/RESULTS.md, roughly): the projections from the numerics and the GEMV's shape, attention
// from its splits and the positions, the rest from fusions, graphs and pdl; prefill in the chunks the prompt splits
// into, a decode/prefill trade-off in side_streams. It reports a profile as the CUDA runner does (launch families per
// form, each form's runs in the workload) and fails deterministically where real lanes do (wrong results, races,
// compile errors, does not fit). Not a measurement: a structured landscape for the strategies' tests and demos.
nlohmann::json lane_run(const std::string& gpu, const nlohmann::json& knobs_json, const std::string& key,
                        uint32_t prompt, uint32_t gen) {
  using knobs::Numerics;
  knobs::Knobs k = knobs::Knobs::from_json(knobs_json);
  const int layers = 8;
  const bool int8 = k.numerics == Numerics::Int8 || k.numerics == Numerics::Int8x2;
  double numerics = k.numerics == Numerics::Dequant  ? 1.0
                    : k.numerics == Numerics::Int8   ? (k.gemv_prequant ? 0.60 : 0.74)
                    : k.numerics == Numerics::Int8x2 ? (k.gemv_prequant ? 0.78 : 0.90)
                                                     : 2.6;
  double shape = (k.gemv_rows_per_warp == 1   ? 1.08
                  : k.gemv_rows_per_warp == 2 ? 0.95
                                              : 1.0) *
                 (k.gemv_warps == 4 ? (k.gemv_rows_per_warp == 4 ? 0.97 : 1.03) : 1.0) *
                 (k.gemv_split == 1   ? 1.0
                  : k.gemv_split == 2 ? (k.gemv_rows_per_warp == 1 ? 0.97 : 1.04)
                                      : 1.07);
  if (int8 && k.gemv_rows_per_warp == 2) shape *= 0.97;
  const double gemv = numerics * shape * (k.side_streams ? 1.06 : 1.0);
  const double gap = (k.cuda_graphs ? 0.6 : 2.2) * (k.pdl ? 0.55 : 1.0);
  const double pos = double(prompt) + double(gen) / 2;

  // One form's launches by kind: us per run of the form.
  using Form = std::map<std::string, double>;
  auto step = [&]() {
    Form f;
    size_t launches = 0;
    auto add = [&](const char* kind, double us, size_t n = 1) {
      f[kind] += us * double(n);
      launches += n;
    };
    for (int l = 0; l < layers; ++l) {
      if (!k.fuse_norm) add("rms_norm", 2.0, 2);
      if (int8 && k.gemv_prequant) add("quantize", 0.9, 2);
      if (k.fuse_qkv)
        add("gemv", 3 * 6.0 * gemv * 0.93);
      else
        add("gemv", 6.0 * gemv, 3);
      if (!k.fuse_rope) add("rope", 1.5);
      if (!k.fuse_rope_kv && !k.fuse_rope) add("kv_append", 1.2);
      const double splits = std::min(k.attn_splits, 8);
      const double heads = k.attn_heads == 0 ? 1.0 : k.attn_heads == 1 ? 1.12 : 0.94;
      add("attention", (3 + pos * 0.012 / splits + 0.3 * k.attn_splits) * heads);
      if (k.attn_splits > 1) add("attention_fold", 1.0);
      add("gemv", 4.0 * gemv * (k.fuse_norm ? 1.08 : 1.0));
      if (k.fuse_glu) {
        add("gemv_glu", 2 * 10.0 * gemv * 0.92);
      } else {
        add("gemv", 10.0 * gemv, 2);
        add("swiglu", 1.3);
      }
      add("gemv", 10.0 * gemv * (k.fuse_norm ? 1.05 : 1.0));
    }
    add("embed", 1.0);
    add("rms_norm", 2.0);
    add("gemv", 40.0 * gemv);
    add("argmax", 3.0);
    f["launch_gaps"] += gap * double(launches);
    return f;
  };
  auto chunk = [&](int rows) {
    Form f;
    size_t launches = 0;
    auto add = [&](const char* kind, double us, size_t n = 1) {
      f[kind] += us * double(n);
      launches += n;
    };
    const double r = rows;
    auto gemm = [&](double base) {
      if (int8)
        return (6 + r * base * 0.03 * (k.gemm_prequant ? 0.75 : 1.0)) *
               (k.gemm_rows == 32 ? (rows <= 32 ? 0.9 : 1.08) : 1.0) * (k.numerics == Numerics::Int8x2 ? 1.3 : 1.0);
      return k.numerics == Numerics::Precise ? r * base * 0.3 : 4 + r * base * 0.09;
    };
    for (int l = 0; l < layers; ++l) {
      if (!k.fuse_norm) add("rms_norm", 2.0 + r * 0.02, 2);
      if (int8 && k.gemm_prequant) add("quantize", 1.5 + r * 0.01, 2);
      add("gemm", gemm(18.0) * (k.fuse_qkv ? 0.95 : 1.0));
      add("rope", 1.5 + r * 0.02);
      add("kv_append", 1.2 + r * 0.01);
      add("attention", r * (2 + pos * 0.004));
      add("gemm", gemm(4.0));
      add("gemm", gemm(20.0) * (k.fuse_glu ? 0.94 : 1.0));
      add("gemm", gemm(10.0));
    }
    add("embed", 1.0 + r * 0.01);
    f["launch_gaps"] += gap * double(launches);
    if (k.side_streams)
      for (auto& [kind, us] : f) us *= 0.88;
    return f;
  };
  // The prompt in chunks, largest first; a last single token through the decode step.
  std::map<int, double> runs;
  uint32_t left = prompt;
  for (int c : k.chunks())
    while (left >= uint32_t(c)) {
      runs[c] += 1;
      left -= uint32_t(c);
    }
  runs[1] += double(left) + double(gen > 0 ? gen - 1 : 0);
  std::map<int, Form> forms;
  for (auto& [rows, n] : runs) forms[rows] = rows == 1 ? step() : chunk(rows);
  auto total = [](const Form& f) {
    double us = 0;
    for (auto& [kind, x] : f) us += x;
    return us;
  };
  const uint64_t h = XXH64(key.data(), key.size(), 11);
  const double noise = 1 + 0.01 * (double(h % 201) / 100.0 - 1);
  const double decode_us = total(forms[1]) * noise;
  double prefill_us = 0;
  for (auto& [rows, n] : runs)
    if (rows > 1) prefill_us += total(forms[rows]) * n * noise;
  prefill_us += double(left) * decode_us;
  const double decode_ms = decode_us / 1000, prefill_ms = prefill_us / 1000;
  nlohmann::json launches = nlohmann::json::array(), form_runs = nlohmann::json::array();
  for (auto& [rows, f] : forms) {
    for (auto& [kind, us] : f)
      launches.push_back({{"rows", rows}, {"kind", kind}, {"output", kind}, {"us", us * noise}});
    form_runs.push_back({{"rows", rows}, {"runs", runs[rows]}});
  }
  nlohmann::json r = synthetic_record(gpu, knobs_json, decode_ms, prefill_ms, 0.004,
                                      {{"total_us", decode_us}, {"launches", launches}, {"forms", form_runs}});
  r["workload_ms"] = prefill_ms + double(gen > 0 ? gen - 1 : 0) * decode_ms;
  auto fail = [&](const char* failure, const char* reason) {
    r["valid"] = false;
    r["failure"] = failure;
    r["reason"] = reason;
  };
  if (k.gemv_warps == 4 && k.gemv_split == 4 && k.gemv_rows_per_warp == 4)
    fail("compile_error", "the GEMV's shared memory exceeds the block's (synthetic)");
  else if (k.numerics == Numerics::Precise && k.max_chunk == 256)
    fail("does_not_fit", "the lane does not fit the device (synthetic)");
  else if (k.numerics == Numerics::Int8 && !k.gemv_prequant && k.gemv_rows_per_warp == 4)
    fail("wrong_results", "arg-max agreement 0.97 below 0.99 (synthetic)");
  else if (k.side_streams && !k.cuda_graphs && k.attn_splits >= 8) {
    fail("race", "the logits differ under --stagger 1 (a race; synthetic)");
    r["stagger_equal"] = false;
  }
  return r;
}

// Runs indexed by GPU kind and knobs; several repetitions of a configuration kept apart.
class ReplayRunner : public Runner {
 public:
  ReplayRunner(const std::filesystem::path& path, double delay_ms) : delay_ms_(delay_ms) {
    auto recording = load(path);
    if (recording.value("synthetic", false) && recording["runs"].empty()) {
      synthetic_ = recording.value("gpu", "");
      landscape_ = recording.value("landscape", "hash");
    }
    for (auto& r : recording["runs"])
      runs_[{r.value("gpu", ""), key_of(r.at("knobs"))}][r.value("repetitions", 0u)] = r;
  }
  bool needs_checkpoint() const override { return false; }
  std::function<Result()> prepare(const LeasedPlan& p, const std::filesystem::path&) override {
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
        if (landscape_ == "lane") {
          auto [prompt, gen] = workload_of(p);
          try {
            return to_result(lane_run(synthetic_, p.knobs, key, prompt, gen), p);
          } catch (const lt::Error& e) {
            return Result::invalid(failure::kNotRecorded,
                                   std::string("the lane landscape cannot read it: ") + e.what());
          }
        }
        return to_result(synthetic_run(synthetic_, p.knobs, key), p);
      }
      auto it = runs_.find({p.gpu, key_of(p.knobs)});
      if (it == runs_.end())
        return Result::invalid(failure::kNotRecorded, "the recording has no run of this configuration on " + p.gpu);
      auto exact = it->second.find(p.repetitions);
      return to_result(exact != it->second.end() ? exact->second : it->second.rbegin()->second, p);
    };
  }

 private:
  double delay_ms_;
  std::string synthetic_;  // a synthetic recording's GPU kind: every configuration answered by its landscape
  std::string landscape_;  // hash | lane
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
