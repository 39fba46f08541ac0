// `lane-tune measure`: configurations of a checkpoint measured on this machine's GPU the way a worker measures them
// (the resident host, the kernel cache, one request a configuration), without a coordinator; --prepare-only builds
// their kernels ahead (no GPU needed).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"
#include "coordinator/core.hpp"
#include "options.hpp"
#include "output/units.hpp"
#include "output/views.hpp"
#include "worker/gpu.hpp"
#include "worker/runner.hpp"

namespace {

// The check prompts a job of seed `seed` would be judged on.
std::vector<lt::worker::Prompt> job_prompts(uint32_t vocab, uint64_t seed) {
  std::vector<lt::worker::Prompt> v;
  for (const auto& p : lt::coord::check_prompts(vocab, seed))
    v.push_back({p.at("n_gen").get<uint32_t>(), p.at("tokens").get<std::vector<int32_t>>()});
  return v;
}

// A prompts file: a line a prompt, `<n_gen> <token> ...`.
std::vector<lt::worker::Prompt> read_prompts(const std::string& path, uint32_t vocab) {
  std::ifstream in(path);
  std::vector<lt::worker::Prompt> v;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::istringstream words(line);
    lt::worker::Prompt p;
    long long n = 0, t = 0;
    if (!(words >> n)) continue;
    while (words >> t) {
      if (t < 0 || t >= vocab) throw lt::Error(path + ":" + std::to_string(line_no) + ": token outside the vocabulary");
      p.tokens.push_back(int32_t(t));
    }
    if (n < 1 || p.tokens.empty()) throw lt::Error(path + ":" + std::to_string(line_no) + ": `<n_gen> <token>...`");
    p.n_gen = uint32_t(n);
    v.push_back(p);
  }
  if (v.empty()) throw lt::Error(path + " holds no prompt");
  return v;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw lt::Error("cannot read " + path);
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  return lt::knobs::Knobs::parse(text, path);
}

// The measured configurations, a row each: verdict, figures scaled, failure, and for people the knobs that differ from
// the defaults.
lt::cli::Table measured_table(uint32_t prompt) {
  using lt::cli::Audience;
  lt::cli::Table t;
  t.columns = {{"config", "config", true},
               {"valid", "valid", false, Audience::Programs},
               {"verdict", "verdict"},
               {"decode_ms", "decode/token", true},
               {"spread_ms", "spread", true},
               {"decode_tok_s", "decode_tok_s", true, Audience::Programs},
               {"prefill_ms", "prefill(" + std::to_string(prompt) + ")", true},
               {"prefill_tok_s", "prefill", true},
               {"workload_ms", "workload", true},
               {"rel_l2", "rel_l2", true, Audience::Programs},
               {"logits_hash", "logits_hash", false, Audience::Programs},
               {"failure", "failure", false, Audience::Programs},
               {"reason", "reason", false, Audience::Programs},
               {"failure_and_reason", "failure", false, Audience::People, 120},
               {"knob_changes", "knobs (vs the defaults)", false, Audience::People, 48},
               {"knobs", "knobs", false, Audience::Programs}};
  return t;
}

// A failed configuration's cell for people: its class and reason, and the first line of the error behind it where
// there is one (a refused knob, nvcc's first complaint), so the table says why without --format json.
std::string failure_text(const lt::worker::Result& r) {
  std::string s = r.failure + ": " + r.reason;
  if (const std::string e = r.error.substr(0, r.error.find('\n')); !e.empty() && e != r.reason) s += " (" + e + ")";
  return s;
}

void add_measured(lt::cli::Table& t, size_t i, const nlohmann::json& knobs, const lt::worker::Result& r,
                  double prefill_tok_s) {
  using namespace lt::cli;
  auto time = [](double ms) { return ms > 0 ? number(ms, duration_ms(ms)) : none(); };
  const std::string changes = knob_changes(knobs, lt::knobs::Knobs{}.to_json());
  t.add({count(int64_t(i)),
         flag(r.valid, "valid"),
         text(!r.valid     ? "failed"
              : r.verified ? "verified"
                           : "screened"),
         time(r.median_ms),
         r.median_ms > 0 ? number(r.spread_ms, spread_ms(r.spread_ms)) : none(),
         r.tok_per_s > 0 ? number(r.tok_per_s, rate(r.tok_per_s)) : none(),
         time(r.prefill_ms),
         prefill_tok_s > 0 ? number(prefill_tok_s, rate(prefill_tok_s)) : none(),
         time(r.workload_ms),
         number(r.rel_l2, std::to_string(r.rel_l2)),
         text(r.logits_hash),
         text(r.failure),
         text(r.reason),
         text(r.valid ? "" : failure_text(r)),
         text(changes.empty() ? "(the defaults)" : changes),
         {"", knobs}});
}

const bool registered = lt::cli::add_command(
    {32, [](CLI::App& app) {
       auto* c = app.add_subcommand(
           "measure",
           "Measure configurations on this machine's GPU as a worker does (resident weights, cached kernels)");
       struct Args {
         std::string file, workload = "512,128", cache, prompts;
         std::vector<std::string> knobs_files, knobs_json;
         uint32_t repeat = 3, warmup = 1;
         int gpu = 0, arch = 90, sms = 132;
         bool profile = false, verify = false, prepare_only = false;
         lt::cli::Output out;
         uint64_t seed = 0;
       };
       auto a = std::make_shared<Args>();
       c->add_option("FILE", a->file, "The GGUF checkpoint")->required()->check(CLI::ExistingFile);
       c->add_option("--knobs", a->knobs_files, "A JSON file of knobs (one configuration; repeat for more)");
       c->add_option("--knobs-json", a->knobs_json, "Knobs as JSON text (repeat for more)");
       c->add_option("--workload", a->workload, "The timed workload: <prompt tokens>,<generated>")
           ->capture_default_str();
       c->add_option("--repeat", a->repeat, "Timed runs of the workload")->capture_default_str();
       c->add_option("--warmup", a->warmup, "Untimed runs of the workload first")->capture_default_str();
       c->add_flag("--profile", a->profile, "Time every launch of one more run");
       c->add_flag("--verify", a->verify, "Run the --stagger checks (seeds 1, 2, 3) too");
       c->add_option("--seed", a->seed, "The check prompts' seed");
       c->add_option("--prompts", a->prompts, "The check prompts instead: a file of lines `<n_gen> <token>...`")
           ->check(CLI::ExistingFile);
       c->add_option("--gpu", a->gpu, "The GPU's index (nvidia-smi's)");
       c->add_option("--cache", a->cache, "Kernel modules, the resident host and images (default ~/.cache/lane-tune)");
       c->add_flag("--prepare-only", a->prepare_only, "Only build the configurations' kernels (no GPU: --arch, --sms)");
       c->add_option("--arch", a->arch, "With --prepare-only: the compute capability to build for (90: sm_90)");
       c->add_option("--sms", a->sms, "With --prepare-only: the GPU's multiprocessors");
       a->out.add(c);
       c->footer(
           "--format json prints one JSON object a configuration as each is measured; the other formats print "
           "the table once all are (a line a configuration on stderr meanwhile).");
       c->callback([a] {
         std::vector<nlohmann::json> configs;
         for (auto& f : a->knobs_files) configs.push_back(read_json(f));
         for (auto& j : a->knobs_json) {
           configs.push_back(lt::knobs::Knobs::parse(j, "--knobs-json"));
         }
         if (configs.empty()) configs.push_back(nlohmann::json::object());
         for (auto& k : configs) lt::knobs::Knobs::from_json(k);  // bad knobs are refused before anything runs
         int prompt = 0, gen = 0;
         if (std::sscanf(a->workload.c_str(), "%d,%d", &prompt, &gen) != 2 || prompt < 1 || gen < 1)
           throw lt::Error("--workload takes <prompt tokens>,<generated>, not " + a->workload);
         auto file = lt::gguf::File::open(a->file);
         auto model = lt::model::recognize(file);
         lt::worker::CudaOptions o;
         if (a->prepare_only) {
           o.gpu.kind = "prepare";
           o.gpu.arch = a->arch;
           o.gpu.sms = a->sms;
         } else {
           o.gpu = lt::worker::detect_gpu(a->gpu);
         }
         const char* home = std::getenv("HOME");
         o.cache_dir = a->cache.empty() ? std::filesystem::path(home ? home : "/tmp") / ".cache" / "lane-tune" / "lanes"
                                        : std::filesystem::path(a->cache);
         auto runner = lt::worker::cuda_runner(o);
         lt::worker::LeasedPlan p;
         p.checkpoint = "local";
         p.gpu = o.gpu.kind;
         p.repetitions = a->repeat;
         p.warmup = a->warmup;
         p.prompts = a->prompts.empty() ? job_prompts(model.vocab, a->seed) : read_prompts(a->prompts, model.vocab);
         p.stagger_seeds = {1, 2, 3};
         p.workload_prompt = uint32_t(prompt);
         p.workload_gen = uint32_t(gen);
         p.verify = a->verify;
         p.profile = a->profile;
         auto table = measured_table(uint32_t(prompt));
         for (size_t i = 0; i < configs.size(); ++i) {
           p.plan = int64_t(i + 1);
           p.knobs = configs[i];
           auto measure = runner->prepare(p, std::filesystem::absolute(a->file));
           if (a->prepare_only) {
             std::printf("%s\n", runner->stats().dump().c_str());
             continue;
           }
           const lt::worker::Result r = measure();
           nlohmann::json out = {{"knobs", configs[i]},
                                 {"valid", r.valid},
                                 {"verified", r.verified},
                                 {"decode_ms", r.median_ms},
                                 {"decode_tok_s", r.tok_per_s},
                                 {"prefill_ms", r.prefill_ms},
                                 {"prefill_tok_s", r.prefill_ms > 0 ? prompt * 1000.0 / r.prefill_ms : 0},
                                 {"workload_ms", r.workload_ms},
                                 {"rel_l2", r.rel_l2},
                                 {"logits_hash", r.logits_hash},
                                 {"failure", r.failure},
                                 {"reason", r.reason},
                                 {"cost", r.cost}};
           if (a->profile) out["profile"] = r.profile;
           if (!r.error.empty()) out["error"] = r.error;
           if (a->out.format == lt::cli::Format::Json) {
             std::printf("%s\n", out.dump().c_str());
           } else {
             add_measured(table, i + 1, configs[i], r, out["prefill_tok_s"].get<double>());
             std::fprintf(stderr, "measured %zu / %zu: %s\n", i + 1, configs.size(),
                          r.valid ? (r.verified ? "verified" : "screened") : ("failed: " + r.failure).c_str());
           }
           std::fflush(stdout);
         }
         if (!a->prepare_only && a->out.format != lt::cli::Format::Json) a->out.print(table);
       });
     }});
}  // namespace
