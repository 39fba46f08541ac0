// The CUDA runner: emits and builds each configuration's lane (cached by content hash), runs the precise lane as
// the reference, then times, profiles, staggers and checks the configuration's lane.
#include <xxhash.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane.hpp"
#include "compiler/lane_output.hpp"
#include "compiler/model.hpp"
#include "compiler/reference.hpp"
#include "worker/checks.hpp"
#include "worker/process.hpp"
#include "worker/runner.hpp"
#include "worker/worker.hpp"

namespace lt::worker {
namespace {

std::string hex64(uint64_t h) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

// A lane built (or failed to build) from one configuration.
struct Built {
  std::filesystem::path dir;
  std::string error;  // nvcc's or the emitter's message when it failed
  double compile_s = 0;
};

// How far the precise lane's logits may stray from the CPU reference's (relative L2; measured on the H200: 0 to
// 3.4e-8).
constexpr double kPreciseAgainstCpu = 1e-6;

// What the precise lane printed for a job's prompts: the reference every configuration is judged against.
struct Reference {
  std::vector<float> logits;
  std::vector<std::vector<int32_t>> tokens;
  std::string error;
};

// How a lane's run failed, as a failure class and a reason.
Result classify(const ProcessResult& r, double limit) {
  if (r.cancelled) return Result::invalid(failure::kCancelled, "the lease was lost; the run was stopped");
  if (r.timed_out)
    return Result::invalid(failure::kTimeout,
                           "the lane ran past its time limit of " + std::to_string(int(limit)) + " s", r.err);
  switch (r.exit_code) {
    case lane::kDoesNotFit:
      return Result::invalid(failure::kDoesNotFit, "the lane does not fit the device", r.err);
    case lane::kCudaError:
      return Result::invalid(failure::kCudaError, "the lane hit a CUDA error", r.err + r.out);
    default:
      return Result::invalid(failure::kCudaError,
                             r.signal ? "the lane died of signal " + std::to_string(r.signal)
                                      : "the lane exited with status " + std::to_string(r.exit_code),
                             r.err + r.out);
  }
}

class CudaRunner : public Runner {
 public:
  explicit CudaRunner(CudaOptions o) : o_(std::move(o)) { std::filesystem::create_directories(o_.cache_dir); }
  bool needs_checkpoint() const override { return true; }

  std::function<Result()> prepare(const Plan& p, const std::filesystem::path& checkpoint) override {
    Built lane, precise;
    uint32_t vocab = 0;
    std::string numerics = "dequant";
    try {
      auto file = gguf::File::open(checkpoint);
      auto model = model::recognize(file);
      vocab = model.vocab;
      auto k = knobs::Knobs::from_json(p.knobs);
      numerics = knobs::to_string(k.numerics);
      lane = build(file, model, k);
      // The reference: the precise lane under the default knobs otherwise, one lane for every configuration of the
      // job (a configuration's other knobs may not combine with precise numerics: gemm_rows needs int8).
      knobs::Knobs ref;
      ref.numerics = knobs::Numerics::Precise;
      try {
        precise = build(file, model, ref);
      } catch (const std::exception& e) {
        precise.error = e.what();
      }
    } catch (const std::exception& e) {
      lane.error = e.what();
    }
    return [this, p, checkpoint, lane, precise, vocab, numerics] {
      if (!lane.error.empty()) {
        auto r = Result::invalid(failure::kCompileError, "the lane does not compile", lane.error);
        r.compile_s = lane.compile_s;
        return r;
      }
      if (!precise.error.empty())
        return Result::invalid(failure::kCompileError, "the precise (reference) lane does not compile", precise.error);
      Result r = measure(p, checkpoint, lane, precise, vocab, numerics);
      r.compile_s = lane.compile_s;
      return r;
    };
  }

 private:
  // Emits and builds the lane for `k`, or finds it built in the cache (by the hash of its source, sidecar, flags).
  Built build(const gguf::File& file, const model::Model& m, const knobs::Knobs& k) {
    auto start = std::chrono::steady_clock::now();
    Built b;
    auto program = lane::compile(file, m, k, knobs::Target{o_.gpu.sms, o_.gpu.arch});
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    XXH64_update(st, program.cu.data(), program.cu.size());
    XXH64_update(st, program.sidecar.data(), program.sidecar.size());
    for (auto& part : lane::nvcc_command("lane", o_.gpu.arch)) XXH64_update(st, part.data(), part.size() + 1);
    b.dir = o_.cache_dir / hex64(XXH64_digest(st));
    XXH64_freeState(st);
    std::lock_guard lock(build_lock(b.dir.string()));
    if (!std::filesystem::exists(b.dir / lane::kBinary)) {
      auto tmp = b.dir;
      tmp += ".building";
      std::filesystem::remove_all(tmp);
      lane::write(program, tmp);
      std::string log;
      try {
        lane::build(tmp, o_.gpu.arch, &log);
      } catch (const std::exception& e) {
        b.error = e.what();
        return b;
      }
      std::filesystem::remove_all(b.dir);
      std::filesystem::rename(tmp, b.dir);
    }
    b.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return b;
  }

  std::vector<std::string> command(const Built& b, const std::filesystem::path& checkpoint,
                                   const std::filesystem::path& prompts) const {
    return {(b.dir / lane::kBinary).string(), checkpoint.string(), (b.dir / lane::kSidecar).string(), "--prompts",
            prompts.string()};
  }

  std::filesystem::path prompts_file(const Plan& p) const {
    std::string text;
    for (auto& q : p.prompts) {
      text += std::to_string(q.n_gen);
      for (auto t : q.tokens) text += " " + std::to_string(t);
      text += "\n";
    }
    auto path = o_.cache_dir / ("prompts-" + hex64(XXH64(text.data(), text.size(), 0)) + ".txt");
    if (!std::filesystem::exists(path)) std::ofstream(path) << text;
    return path;
  }

  // The precise lane's logits and tokens for the plan's prompts, run once per checkpoint and prompts.
  const Reference& reference(const Plan& p, const std::filesystem::path& checkpoint, const Built& precise,
                             const std::filesystem::path& prompts) {
    std::lock_guard lock(ref_m_);
    auto key = p.checkpoint + "|" + prompts.string();
    auto it = refs_.find(key);
    if (it != refs_.end()) return it->second;
    Reference ref;
    auto logits = o_.cache_dir / ("reference-" + p.checkpoint + "-" + prompts.stem().string() + ".f32");
    auto cmd = command(precise, checkpoint, prompts);
    cmd.insert(cmd.end(), {"--logits", logits.string()});
    log(0, "reference", {{"job", std::to_string(p.job)}, {"gpu", p.gpu}});
    auto run = run_process(cmd, p.time_limit_s, p.cancelled.get());
    if (run.exit_code != 0) {
      ref.error = classify(run, p.time_limit_s).reason + ": " + run.err.substr(0, 2000);
    } else {
      try {
        for (auto& q : lane::parse_output(run.out).prompts) ref.tokens.push_back(q.tokens);
        ref.logits = read_logits(logits.string());
        ref.error = against_cpu_reference(p, checkpoint, ref);
      } catch (const std::exception& e) {
        ref.error = e.what();
      }
    }
    return refs_.emplace(key, std::move(ref)).first->second;
  }

  // Why the precise lane's tokens and logits are not the CPU reference's (f64, on this machine's cores), or empty:
  // the precise lane is the reference every configuration is judged against, so it is judged first.
  static std::string against_cpu_reference(const Plan& p, const std::filesystem::path& checkpoint,
                                           const Reference& lane) {
    auto file = gguf::File::open(checkpoint);
    auto model = model::recognize(file);
    reference::Reference cpu(file, model);
    std::vector<float> logits;
    std::vector<std::vector<int32_t>> tokens;
    for (auto& q : p.prompts) {
      auto g = cpu.generate(q.tokens, static_cast<int>(q.n_gen));
      tokens.push_back(g.tokens);
      logits.insert(logits.end(), g.logits.begin(), g.logits.end());
    }
    if (tokens != lane.tokens) return "the precise lane's tokens differ from the CPU reference's";
    const Agreement a = compare_logits(lane.logits, logits, model.vocab);
    if (!(a.rel_l2 <= kPreciseAgainstCpu))
      return "the precise lane's logits differ from the CPU reference's: relative L2 error " +
             std::to_string(a.rel_l2) + " (at most " + std::to_string(kPreciseAgainstCpu) + ")";
    log(1, "reference_checked", {{"job", std::to_string(p.job)}, {"rel_l2", std::to_string(a.rel_l2)}});
    return {};
  }

  Result measure(const Plan& p, const std::filesystem::path& checkpoint, const Built& lane, const Built& precise,
                 uint32_t vocab, const std::string& numerics) {
    clocks_at_start_ = read_clocks(o_.gpu.index);
    auto prompts = prompts_file(p);
    const Reference& ref = reference(p, checkpoint, precise, prompts);
    if (!ref.error.empty()) return Result::invalid(failure::kWrongResults, "the precise lane failed", ref.error);
    auto base = command(lane, checkpoint, prompts);
    double limit = p.time_limit_s;
    auto run = [&](std::vector<std::string> extra, ProcessResult& out) -> std::optional<Result> {
      auto cmd = base;
      cmd.insert(cmd.end(), extra.begin(), extra.end());
      out = run_process(cmd, limit, p.cancelled.get());
      if (out.exit_code != 0 || out.timed_out || out.cancelled) return classify(out, limit);
      return std::nullopt;
    };
    ProcessResult pr;
    for (uint32_t i = 0; i < p.warmup; ++i)
      if (auto bad = run({}, pr)) return *bad;
    std::vector<double> decode, prefill, tok_s;
    try {
      for (uint32_t i = 0; i < std::max(1u, p.repetitions); ++i) {
        if (auto bad = run({}, pr)) return *bad;
        auto out = lane::parse_output(pr.out);
        double d = 0, f = 0, t = 0;
        int n = 0;
        for (auto& q : out.prompts) {
          f += q.prefill_ms;
          if (q.decode_ms_per_token > 0) d += q.decode_ms_per_token, t += q.decode_tok_per_s, ++n;
        }
        decode.push_back(n ? d / n : 0);
        tok_s.push_back(n ? t / n : 0);
        prefill.push_back(f);
      }
    } catch (const std::exception& e) {
      return Result::invalid(failure::kBadOutput, "the lane's output breaks the contract", e.what());
    }
    Result r;
    auto t = timing(decode);
    r.median_ms = t.median;
    r.spread_ms = t.spread;
    r.min_ms = t.min;
    r.max_ms = t.max;
    r.prefill_ms = timing(prefill).median;
    r.tok_per_s = timing(tok_s).median;

    if (auto bad = run({"--profile"}, pr)) return *bad;
    try {
      auto out = lane::parse_output(pr.out);
      nlohmann::json launches = nlohmann::json::array();
      for (auto& l : out.profile)
        launches.push_back({{"rows", l.rows}, {"kind", l.kind}, {"output", l.output}, {"us", l.us}});
      r.profile = {{"total_us", out.profile_total_us},
                   {"launches", launches},
                   {"device_bytes", out.device_bytes},
                   {"host_bytes", out.host_bytes}};
    } catch (const std::exception& e) {
      return Result::invalid(failure::kBadOutput, "the lane's --profile output breaks the contract", e.what());
    }

    auto logits_path = (lane.dir / ("logits-" + std::to_string(p.plan) + ".f32")).string();
    if (auto bad = run({"--logits", logits_path}, pr)) return *bad;
    std::vector<float> logits;
    bool near_ties_explain = false;  // the tokens differ only by near ties' flips, which the numerics allow
    try {
      logits = read_logits(logits_path);
      std::vector<std::vector<int32_t>> tokens;
      for (auto& q : lane::parse_output(pr.out).prompts) tokens.push_back(q.tokens);
      r.tokens_equal = tokens == ref.tokens;
      std::vector<size_t> rows;
      for (const auto& t : ref.tokens) rows.push_back(t.size());
      const auto g = compare_generation(logits, ref.logits, vocab, rows, tolerance(numerics).tie);
      near_ties_explain = g.explained && g.near_ties > 0;
      r.rel_l2 = std::isfinite(g.a.rel_l2) ? g.a.rel_l2 : 1e300;
      r.argmax_agree = g.a.argmax_agree;
      r.logits_hash = logits_hash(logits);
    } catch (const std::exception& e) {
      return Result::invalid(failure::kWrongResults, "the lane's logits cannot be compared", e.what());
    }
    r.stagger_equal = true;
    std::string stagger_reason;
    for (auto seed : p.stagger_seeds) {
      auto path = logits_path + ".stagger";
      if (auto bad = run({"--stagger", std::to_string(seed), "--logits", path}, pr)) return *bad;
      std::vector<float> s;
      try {
        s = read_logits(path);
      } catch (const std::exception& e) {
        return Result::invalid(failure::kBadOutput, "the staggered run wrote no logits", e.what());
      }
      std::filesystem::remove(path);
      if (s.size() != logits.size() || std::memcmp(s.data(), logits.data(), logits.size() * 4) != 0) {
        r.stagger_equal = false;
        stagger_reason = "the logits differ under --stagger " + std::to_string(seed) + " (a race)";
        break;
      }
    }
    std::filesystem::remove(logits_path);
    auto tol = tolerance(numerics);
    r.valid = false;
    if (!r.stagger_equal) {
      r.failure = failure::kRace;
      r.reason = stagger_reason;
    } else if (!r.tokens_equal && !near_ties_explain) {
      r.failure = failure::kWrongResults;
      r.reason = "the generated tokens differ from the precise lane's (beyond near ties the numerics may flip)";
    } else if (r.rel_l2 > tol.rel_l2) {
      r.failure = failure::kWrongResults;
      r.reason = "relative L2 error " + std::to_string(r.rel_l2) + " exceeds " + std::to_string(tol.rel_l2);
    } else if (r.argmax_agree < tol.argmax_agree) {
      r.failure = failure::kWrongResults;
      r.reason =
          "arg-max agreement " + std::to_string(r.argmax_agree) + " is below " + std::to_string(tol.argmax_agree);
    } else {
      r.valid = true;
    }
    r.environment = o_.gpu.environment();
    r.environment.update(clocks_at_start_);
    return r;
  }

  // The lock that keeps two threads from building the same lane at once.
  std::mutex& build_lock(const std::string& dir) {
    std::lock_guard lock(map_m_);
    return build_m_[dir];
  }

  CudaOptions o_;
  std::mutex ref_m_, map_m_;
  std::map<std::string, Reference> refs_;
  std::map<std::string, std::mutex> build_m_;
  nlohmann::json clocks_at_start_ = nlohmann::json::object();
};
}  // namespace

std::unique_ptr<Runner> cuda_runner(const CudaOptions& o) {
  return std::make_unique<CudaRunner>(o);
}

}  // namespace lt::worker
