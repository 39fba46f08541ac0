// The CUDA runner: each configuration's lane image prepared on CPU threads (its kernels from the kernel cache, built
// ahead on every core), then measured in the resident host that holds the checkpoint's weights: the prompts against
// the precise lane's (once a job, itself checked against the CPU reference), the workload's timed runs, a profile and
// the --stagger checks, all in one request.
#include <sys/resource.h>
#include <xxhash.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "compiler/digest.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane.hpp"
#include "compiler/lane_image.hpp"
#include "compiler/lane_output.hpp"
#include "compiler/model.hpp"
#include "compiler/reference.hpp"
#include "worker/checks.hpp"
#include "worker/kernel_cache.hpp"
#include "worker/process.hpp"
#include "worker/resident_host.hpp"
#include "worker/runner.hpp"
#include "worker/worker.hpp"

namespace lt::worker {
namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void write_file(const std::filesystem::path& p, const void* data, size_t n) {
  const auto tmp = p.string() + ".tmp" + std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), std::streamsize(n));
    if (!out) throw lt::Error("cannot write " + p.string());
  }
  std::filesystem::rename(tmp, p);
}

// Writes `bytes` to dir/<xxh64 of them><ext> unless it is there; returns the path.
std::filesystem::path stored(const std::filesystem::path& dir, const std::string& ext, const void* data, size_t n) {
  const auto p = dir / (hex64(XXH64(data, n, 0)) + ext);
  if (!std::filesystem::exists(p)) write_file(p, data, n);
  return p;
}

using knobs::kPreciseAgainstCpu;

// A checkpoint as the runner keeps it: opened, recognized, its weights manifest written, its precise lane's image.
struct Model {
  gguf::File file;
  model::Model model;
  std::filesystem::path manifest;
  lane::Image precise;
  std::filesystem::path precise_image, precise_sidecar;
};

// What the precise lane printed for a job's prompts (the reference every configuration is judged against), and the
// CPU reference's verdict on it, computed beside the measurements.
struct Reference {
  std::vector<float> logits;
  std::vector<std::vector<int32_t>> tokens;
  std::string error;                    // the precise lane failed
  std::shared_future<std::string> cpu;  // why its tokens or logits are not the CPU reference's, or empty
};

// The CPU reference's tokens and logits for a job's prompts (f64, on this machine's cores), or why it failed.
struct CpuGeneration {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<float> logits;
  std::string error;
};

// A configuration prepared for measuring.
struct Prepared {
  std::filesystem::path image, sidecar;
  std::string error;  // the emitter's or nvcc's message when it does not compile
  double build_s = 0;
  size_t kernels = 0, built = 0;
};

// How a run in the resident host failed, as a failure class and a reason.
Result classify(const ResidentRun& r, double limit) {
  if (r.cancelled) return Result::invalid(failure::kCancelled, "the lease was lost; the run was stopped");
  if (r.timed_out)
    return Result::invalid(failure::kTimeout,
                           "the lane ran past its time limit of " + std::to_string(int(limit)) + " s", r.err);
  if (r.died) return Result::invalid(failure::kCudaError, "the lane ended the resident host", r.err + r.out);
  switch (r.status) {
    case lane::kDoesNotFit:
      return Result::invalid(failure::kDoesNotFit, "the lane does not fit the device", r.err);
    case lane::kCudaError:
      return Result::invalid(failure::kCudaError, "the lane hit a CUDA error", r.err + r.out);
    default:
      return Result::invalid(failure::kCudaError, "the lane exited with status " + std::to_string(r.status),
                             r.err + r.out);
  }
}

class CudaRunner : public Runner {
 public:
  explicit CudaRunner(CudaOptions o)
      : o_(std::move(o)),
        pool_(o_.build_threads ? o_.build_threads : std::max(1u, std::thread::hardware_concurrency())),
        kernels_(o_.cache_dir / "kernels" / ("sm_" + std::to_string(o_.gpu.arch)), o_.gpu.arch, pool_) {
    for (const char* d : {"images", "host", "runs"}) std::filesystem::create_directories(o_.cache_dir / d);
    // The resident host's program builds once per architecture, beside the first plans' kernels.
    program_ = std::async(std::launch::async, [this] { return build_program(); }).share();
  }

  ~CudaRunner() override {
    std::lock_guard lock(host_m_);
    host_.reset();
  }

  bool needs_checkpoint() const override { return true; }
  bool overlaps() const override { return true; }

  nlohmann::json stats() const override {
    const auto k = kernels_.stats();
    return {{"kernels_built", k.builds}, {"kernels_found", k.hits}, {"kernel_build_s", k.build_s}};
  }

  std::function<Result()> prepare(const LeasedPlan& p, const std::filesystem::path& checkpoint) override {
    const auto t0 = std::chrono::steady_clock::now();
    Prepared x;
    std::shared_ptr<Model> m;
    Tolerance tol = tolerance(knobs::Numerics::Dequant);
    try {
      m = model_of(checkpoint);
      cpu_generation(p, checkpoint);  // (the job's first plan starts it, beside the builds)
      const auto k = knobs::Knobs::from_json(p.knobs);
      tol = tolerance(k);
      x = prepare_image(m->file, m->model, k);
    } catch (const std::exception& e) {
      x.error = e.what();
    }
    x.build_s = since(t0);
    return [this, p, checkpoint, m, x, tol] {
      if (!x.error.empty()) {
        auto r = Result::invalid(failure::kCompileError, "the lane does not compile", x.error);
        r.compile_s = x.build_s;
        return r;
      }
      Result r = measure(p, checkpoint, *m, x, tol);
      r.compile_s = x.build_s;
      r.cost["build_s"] = x.build_s;
      r.cost["kernels"] = x.kernels;
      r.cost["kernels_built"] = x.built;
      return r;
    };
  }

 private:
  // The resident host's program, built (or found built) in cache_dir/host/<hash of its source and flags>.
  std::filesystem::path build_program() {
    const std::string source = lane::resident_source();
    const auto probe = lane::nvcc_resident_command("host.cu", "lane-host", o_.gpu.arch);
    XXH64_state_t* st = XXH64_createState();
    XXH64_reset(st, 0);
    XXH64_update(st, source.data(), source.size());
    for (auto& part : probe) XXH64_update(st, part.data(), part.size() + 1);
    const auto dir = o_.cache_dir / "host" / hex64(XXH64_digest(st));
    XXH64_freeState(st);
    const auto binary = dir / "lane-host";
    if (std::filesystem::exists(binary)) return binary;
    const auto tmp = dir.string() + ".building";
    std::filesystem::remove_all(tmp);
    std::filesystem::create_directories(tmp);
    write_file(std::filesystem::path(tmp) / "host.cu", source.data(), source.size());
    const auto t0 = std::chrono::steady_clock::now();
    const ProcessResult r =
        run_process(lane::nvcc_resident_command(tmp + "/host.cu", tmp + "/lane-host", o_.gpu.arch), 1200);
    if (r.exit_code != 0) throw lt::Error("nvcc failed on the resident host:\n" + r.err + r.out);
    std::filesystem::remove_all(dir);
    std::filesystem::rename(tmp, dir);
    log(0, "resident_host_built", {{"seconds", std::to_string(since(t0))}, {"path", binary.string()}});
    return binary;
  }

  // The checkpoint opened and recognized once, its manifest and precise image written.
  std::shared_ptr<Model> model_of(const std::filesystem::path& checkpoint) {
    std::lock_guard lock(models_m_);
    auto& slot = models_[checkpoint.string()];
    if (slot) return slot;
    auto m = std::shared_ptr<Model>(new Model{gguf::File::open(checkpoint), model::Model{}, {}, {}, {}, {}});
    m->model = model::recognize(m->file);  // (the model points into its own file)
    const std::string manifest = lane::weights_manifest(m->file, m->model);
    m->manifest = stored(o_.cache_dir / "images", ".weights", manifest.data(), manifest.size());
    // The reference: the precise lane under the default knobs otherwise, one lane for every configuration (a
    // configuration's other knobs may not combine with precise numerics: gemm_rows needs int8).
    knobs::Knobs ref;
    ref.numerics = knobs::Numerics::Precise;
    const Prepared p = prepare_image(m->file, m->model, ref);
    m->precise_image = p.image;
    m->precise_sidecar = p.sidecar;
    slot = m;
    return m;
  }

  // The configuration's image and sidecar written, its kernels built.
  Prepared prepare_image(const gguf::File& file, const model::Model& model, const knobs::Knobs& k) {
    Prepared x;
    const lane::Image img = lane::image(file, model, k, knobs::Target{o_.gpu.sms, o_.gpu.arch});
    // (the kernels this configuration added: others' builds beside it are theirs)
    const std::vector<lane::Module> modules = kernels_.modules(img, &x.built);
    x.kernels = modules.size();
    const std::string text = lane::image_text(img, modules);
    x.image = stored(o_.cache_dir / "images", ".image", text.data(), text.size());
    x.sidecar = stored(o_.cache_dir / "images", ".sidecar", img.sidecar.data(), img.sidecar.size());
    return x;
  }

  std::filesystem::path prompts_file(const LeasedPlan& p) const {
    std::string text;
    for (auto& q : p.prompts) {
      text += std::to_string(q.n_gen);
      for (auto t : q.tokens) text += " " + std::to_string(t);
      text += "\n";
    }
    return stored(o_.cache_dir / "runs", ".prompts", text.data(), text.size());
  }

  // The resident host for `checkpoint`, started (its weights uploaded) when it is not running; the seconds starting
  // it took go to `load_s`. One checkpoint is resident at a time.
  ResidentHost& host_for(const std::filesystem::path& checkpoint, const Model& m, double timeout_s, double& load_s) {
    if (!host_ || host_checkpoint_ != checkpoint) {
      host_.reset();
      host_ = std::make_unique<ResidentHost>(program_.get(), checkpoint, m.manifest);
      host_checkpoint_ = checkpoint;
    }
    if (!host_->running()) {
      load_s = host_->start(timeout_s);
      log(0, "resident_host_up",
          {{"seconds", std::to_string(load_s)}, {"weight_bytes", std::to_string(host_->weight_bytes())}});
    }
    return *host_;
  }

  // The precise lane's logits and tokens for the plan's prompts, run once per checkpoint and prompts; its check
  // against the CPU reference runs on its own thread.
  Reference& reference(const LeasedPlan& p, const std::filesystem::path& checkpoint, const Model& m,
                       const std::filesystem::path& prompts, ResidentHost& host) {
    const std::string key = checkpoint.string() + "|" + prompts.string();
    auto it = refs_.find(key);
    if (it != refs_.end()) return it->second;
    Reference ref;
    const auto logits = o_.cache_dir / "runs" / ("reference-" + prompts.stem().string() + "-" + p.checkpoint + ".f32");
    log(0, "reference", {{"job", std::to_string(p.job)}, {"gpu", p.gpu}});
    const ResidentRun run =
        host.run(m.precise_image, m.precise_sidecar, {"--prompts", prompts.string(), "--logits", logits.string()},
                 p.time_limit_s, p.cancelled.get());
    if (run.status != 0) {
      ref.error = classify(run, p.time_limit_s).reason + ": " + run.err.substr(0, 2000);
    } else {
      try {
        for (auto& q : lane::parse_output(run.out).prompts) ref.tokens.push_back(q.tokens);
        ref.logits = read_logits(logits.string());
        const auto tokens = ref.tokens;
        const auto lg = ref.logits;
        const uint32_t vocab = m.model.vocab;
        const int64_t job = p.job;
        ref.cpu = std::async(std::launch::async, [cpu = cpu_generation(p, checkpoint), tokens, lg, vocab, job] {
                    try {
                      return against_cpu_reference(cpu.get(), tokens, lg, vocab, job);
                    } catch (const std::exception& e) {
                      return std::string("the CPU reference failed: ") + e.what();
                    }
                  }).share();
      } catch (const std::exception& e) {
        ref.error = e.what();
      }
    }
    return refs_.emplace(key, std::move(ref)).first->second;
  }

  // The CPU reference's generation for the plan's prompts, started once per checkpoint and prompts: by the job's first
  // plan's preparation, so that it runs beside the first builds and the host's start, not after the precise lane. Its
  // threads run at a lower priority (nice 10, which the pool's threads inherit): the builds gate the GPU, the verdict
  // only the verifications' records.
  std::shared_future<CpuGeneration> cpu_generation(const LeasedPlan& p, const std::filesystem::path& checkpoint) {
    const std::string key = checkpoint.string() + "|" + prompts_file(p).string();
    std::lock_guard lock(cpu_m_);
    auto& slot = cpu_[key];
    if (!slot.valid())
      slot = std::async(std::launch::async, [checkpoint, prompts = p.prompts] {
               setpriority(PRIO_PROCESS, 0, 10);  // (Linux: this thread alone; a failure leaves it as it was)
               CpuGeneration g;
               try {
                 auto file = gguf::File::open(checkpoint);
                 auto model = model::recognize(file);
                 reference::Reference cpu(file, model);
                 std::vector<reference::Reference::Request> requests;
                 for (auto& q : prompts) requests.push_back({q.tokens, static_cast<int>(q.n_gen)});
                 for (auto& r : cpu.generate(requests)) {  // every prompt a step together: each weight read once a step
                   g.tokens.push_back(r.tokens);
                   g.logits.insert(g.logits.end(), r.logits.begin(), r.logits.end());
                 }
               } catch (const std::exception& e) {
                 g.error = std::string("the CPU reference failed: ") + e.what();
               }
               return g;
             }).share();
    return slot;
  }

  // Why the precise lane's tokens and logits are not the CPU reference's, or empty: the precise lane is the reference
  // every configuration is judged against, so it is judged first.
  static std::string against_cpu_reference(const CpuGeneration& cpu,
                                           const std::vector<std::vector<int32_t>>& lane_tokens,
                                           const std::vector<float>& lane_logits, uint32_t vocab, int64_t job) {
    if (!cpu.error.empty()) return cpu.error;
    if (cpu.tokens != lane_tokens) return "the precise lane's tokens differ from the CPU reference's";
    const Agreement a = compare_logits(lane_logits, cpu.logits, vocab);
    if (!(a.rel_l2 <= kPreciseAgainstCpu))
      return "the precise lane's logits differ from the CPU reference's: relative L2 error " +
             std::to_string(a.rel_l2) + " (at most " + std::to_string(kPreciseAgainstCpu) + ")";
    log(1, "reference_checked", {{"job", std::to_string(job)}, {"rel_l2", std::to_string(a.rel_l2)}});
    return {};
  }

  Result measure(const LeasedPlan& p, const std::filesystem::path& checkpoint, const Model& m, const Prepared& x,
                 const Tolerance& tol) {
    std::unique_lock lock(host_m_);  // the GPU's part; the checks after it run beside the next measurement's
    const auto t0 = std::chrono::steady_clock::now();
    // The clocks, read at most every 30 s: nvidia-smi takes ~0.1 s, which the GPU would spend idle.
    if (clocks_read_.time_since_epoch().count() == 0 || since(clocks_read_) > 30) {
      clocks_ = read_clocks(o_.gpu.index);
      clocks_read_ = std::chrono::steady_clock::now();
    }
    const nlohmann::json clocks = clocks_;
    double load_s = 0;
    ResidentHost* host = nullptr;
    try {
      host = &host_for(checkpoint, m, std::max(600.0, p.time_limit_s), load_s);
    } catch (const std::exception& e) {
      return Result::invalid(failure::kCudaError, "the resident host does not start", e.what());
    }
    const auto prompts = prompts_file(p);
    Reference& ref = reference(p, checkpoint, m, prompts, *host);
    if (!ref.error.empty()) return Result::invalid(failure::kWrongResults, "the precise lane failed", ref.error);
    if (!host->running()) load_s += host->start(600);

    // The whole measurement in one request.
    const auto logits_path = o_.cache_dir / "runs" / ("logits-" + std::to_string(p.plan) + ".f32");
    std::vector<std::string> flags = {"--prompts", prompts.string(), "--logits", logits_path.string()};
    const bool workload = p.workload_prompt > 0 && p.workload_gen > 0;
    if (workload)
      flags.insert(flags.end(),
                   {"--workload", std::to_string(p.workload_prompt) + "," + std::to_string(p.workload_gen), "--warmup",
                    std::to_string(p.warmup), "--repeat", std::to_string(std::max(1u, p.repetitions))});
    if (p.profile) flags.push_back("--profile");
    // A screen stops early when its first run is already far behind the job's best (a verification never does).
    const double best = p.best_ms->load();
    if (workload && !p.verify && !p.cutoff_on.empty() && p.cutoff_factor > 1 && best > 0) {
      char limit[64];
      std::snprintf(limit, sizeof limit, "%s=%.4f", p.cutoff_on.c_str(), best * p.cutoff_factor);
      flags.insert(flags.end(), {"--cutoff", limit});
    }
    if (p.verify && !p.stagger_seeds.empty()) {
      std::string seeds;
      for (auto s : p.stagger_seeds) seeds += (seeds.empty() ? "" : ",") + std::to_string(s);
      flags.insert(flags.end(), {"--stagger-check", seeds});
    }
    const auto t_run = std::chrono::steady_clock::now();
    // How long the host sat idle since its last request ended (the worker's and the coordinator's part of a gap).
    const double host_idle_s =
        last_run_end_.time_since_epoch().count() ? std::chrono::duration<double>(t_run - last_run_end_).count() : 0;
    const ResidentRun run = host->run(x.image, x.sidecar, flags, p.time_limit_s, p.cancelled.get());
    last_run_end_ = std::chrono::steady_clock::now();
    const double run_s = since(t_run);
    // What the checks read of the reference, taken while the lock is held (the map's entries are never changed once
    // made; the CPU reference's verdict is read through a copy of its future).
    const std::vector<float>& ref_logits = ref.logits;
    const std::vector<std::vector<int32_t>>& ref_tokens = ref.tokens;
    std::shared_future<std::string> ref_cpu = ref.cpu;
    lock.unlock();
    if (run.status != 0) {
      std::filesystem::remove(logits_path);
      Result r = classify(run, p.time_limit_s);
      r.cost = {{"load_s", load_s}, {"run_s", run_s}, {"host_idle_s", host_idle_s}};
      return r;
    }
    const auto t_checks = std::chrono::steady_clock::now();
    Result r;
    lane::Output out;
    try {
      out = lane::parse_output(run.out);
    } catch (const std::exception& e) {
      std::filesystem::remove(logits_path);
      return Result::invalid(failure::kBadOutput, "the lane's output breaks the contract", e.what());
    }
    // Timings: the workload's runs (decode per token, prefill, time to the last token), else the prompts' figures.
    std::vector<double> decode, prefill, total, tok_s;
    if (out.cutoff) out.workload = {out.cutoff->run};  // the estimate stands for the runs left out
    for (const auto& w : out.workload) {
      decode.push_back(w.decode_ms_per_token);
      prefill.push_back(w.prefill_ms);
      total.push_back(w.total_ms);
      tok_s.push_back(w.decode_ms_per_token > 0 ? 1000.0 / w.decode_ms_per_token : 0);
    }
    if (out.workload.empty()) {
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
    const Timing t = timing(decode);
    r.median_ms = t.median;
    r.spread_ms = t.spread;
    r.min_ms = t.min;
    r.max_ms = t.max;
    r.prefill_ms = timing(prefill).median;
    r.tok_per_s = timing(tok_s).median;
    r.workload_ms = total.empty() ? 0 : timing(total).median;
    nlohmann::json launches = nlohmann::json::array(), forms = nlohmann::json::array(),
                   phases = nlohmann::json::object();
    for (auto& l : out.profile)
      launches.push_back({{"rows", l.rows}, {"kind", l.kind}, {"output", l.output}, {"us", l.us}});
    for (auto& f : out.profile_runs) forms.push_back({{"rows", f.rows}, {"runs", f.runs}});
    for (auto& [name, ms] : out.phases) phases[name] = ms / 1000.0;
    if (p.profile && !out.cutoff)
      r.profile = {{"total_us", out.profile_total_us},
                   {"launches", launches},
                   {"forms", forms},
                   {"device_bytes", out.device_bytes},
                   {"host_bytes", out.host_bytes}};

    // Checks: the prompts' tokens and logits against the precise lane's, and the staggered runs bit for bit.
    std::vector<float> logits;
    bool near_ties_explain = false;  // the tokens differ only by near ties' flips, which the numerics allow
    try {
      logits = read_logits(logits_path.string());
      std::filesystem::remove(logits_path);
      std::vector<std::vector<int32_t>> tokens;
      for (auto& q : out.prompts) tokens.push_back(q.tokens);
      r.tokens_equal = tokens == ref_tokens;
      std::vector<size_t> rows;
      for (const auto& tk : ref_tokens) rows.push_back(tk.size());
      const auto g = compare_generation(logits, ref_logits, m.model.vocab, rows, tol.tie);
      near_ties_explain = g.explained && g.near_ties > 0;
      r.rel_l2 = std::isfinite(g.a.rel_l2) ? g.a.rel_l2 : 1e300;
      r.argmax_agree = g.a.argmax_agree;
      r.logits_hash = logits_hash(logits);
    } catch (const std::exception& e) {
      std::filesystem::remove(logits_path);
      return Result::invalid(failure::kWrongResults, "the lane's logits cannot be compared", e.what());
    }
    std::string stagger_reason;
    bool staggered = p.verify && !p.stagger_seeds.empty();
    r.stagger_equal = staggered;
    if (staggered && out.stagger_checks.size() != p.stagger_seeds.size()) {
      r.stagger_equal = false;
      stagger_reason = "the lane ran " + std::to_string(out.stagger_checks.size()) + " of its " +
                       std::to_string(p.stagger_seeds.size()) + " --stagger checks";
    }
    for (const auto& c : out.stagger_checks)
      if (!c.same && stagger_reason.empty()) {
        r.stagger_equal = false;
        stagger_reason = "the logits differ under --stagger " + std::to_string(c.seed) + " (a race)";
      }
    // The precise lane itself against the CPU reference: awaited before a verification, read if done otherwise.
    std::string cpu;
    if (ref_cpu.valid() && (p.verify || ref_cpu.wait_for(std::chrono::seconds(0)) == std::future_status::ready))
      cpu = ref_cpu.get();
    r.valid = false;
    if (!cpu.empty()) {
      r.failure = failure::kWrongResults;
      r.reason = "the precise lane failed";
      r.error = cpu;
    } else if (staggered && !r.stagger_equal) {
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
    r.verified = r.valid && staggered;
    r.environment = o_.gpu.environment();
    r.environment.update(clocks);
    r.cost = {{"load_s", load_s},
              {"run_s", run_s},
              {"checks_s", since(t_checks)},
              {"host_idle_s", host_idle_s},
              {"phases_s", phases},
              {"measure_s", since(t0)}};
    if (out.cutoff) r.cost["cutoff_ms"] = out.cutoff->limit_ms;
    return r;
  }

  CudaOptions o_;
  ThreadPool pool_;
  KernelCache kernels_;
  std::shared_future<std::filesystem::path> program_;
  std::mutex models_m_;
  std::map<std::string, std::shared_ptr<Model>> models_;
  std::mutex host_m_;  // one measurement at a time; guards the host and the references
  std::unique_ptr<ResidentHost> host_;
  std::filesystem::path host_checkpoint_;
  std::map<std::string, Reference> refs_;
  std::mutex cpu_m_;                                              // guards cpu_
  std::map<std::string, std::shared_future<CpuGeneration>> cpu_;  // by checkpoint and prompts
  nlohmann::json clocks_ = nlohmann::json::object();
  std::chrono::steady_clock::time_point last_run_end_{};  // when the host last finished a request
  std::chrono::steady_clock::time_point clocks_read_{};
};
}  // namespace

std::unique_ptr<Runner> cuda_runner(const CudaOptions& o) {
  return std::make_unique<CudaRunner>(o);
}

}  // namespace lt::worker
