// `lane-tune export`: a job's best valid configuration for a GPU kind frozen into a release directory (the lane's
// source, sidecar and binary, its manifest and a README), recorded as a release on the coordinator.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/lane.hpp"
#include "compiler/model.hpp"
#include "compiler/version.hpp"
#include "coordinator/release_client.hpp"
#include "options.hpp"

namespace {
namespace fs = std::filesystem;

// The command's arguments.
struct Args {
  int64_t job = 0;
  std::string gpu, out, checkpoint, coordinator = lt::coord::default_coordinator(), token = lt::coord::default_token(),
                                    tls_ca = lt::coord::default_tls_ca();
  bool force = false, no_build = false;
};

std::string utc_now() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json parse_or_empty(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? nlohmann::json::object() : j;
}

// The checkpoint the lane is compiled against: --checkpoint, else the coordinator's own file when it is readable here,
// else its bytes fetched by digest into the release directory. Its content digest is checked either way.
fs::path local_checkpoint(const Args& a, const lt::coord::Candidate& c, lt::coord::ReleaseClient& client) {
  auto matches = [&](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && fs::file_size(p, ec) == c.checkpoint.size &&
           lt::coord::content_digest(p) == c.checkpoint.digest;
  };
  if (!a.checkpoint.empty()) {
    if (!matches(a.checkpoint))
      throw lt::Error(a.checkpoint + " is not the job's checkpoint (digest " + c.checkpoint.digest + ", " +
                      std::to_string(c.checkpoint.size) + " bytes)");
    return fs::absolute(a.checkpoint);
  }
  if (!c.checkpoint.path.empty() && matches(c.checkpoint.path)) return c.checkpoint.path;
  auto path = fs::absolute(a.out) / "model.gguf";
  std::fprintf(stderr, "fetching the checkpoint (%llu bytes) from the coordinator into %s\n",
               static_cast<unsigned long long>(c.checkpoint.size), path.c_str());
  client.fetch_checkpoint(c.checkpoint.digest, path);
  if (!matches(path)) throw lt::Error("the fetched checkpoint's digest is not " + c.checkpoint.digest);
  return path;
}

// The prompts in the lane's `--prompts` format: a line a prompt, `<n_gen> <token> ...`.
std::string prompts_text(const std::string& prompts) {
  std::string text;
  for (auto& p : nlohmann::json::parse(prompts)) {
    text += std::to_string(p.at("n_gen").get<uint32_t>());
    for (auto& t : p.at("tokens")) text += " " + std::to_string(t.get<int32_t>());
    text += "\n";
  }
  return text;
}

nlohmann::json manifest(const lt::coord::Candidate& c, const fs::path& checkpoint, bool built,
                        const std::string& nvcc_log) {
  auto& r = c.run;
  nlohmann::json prompts = nlohmann::json::parse(c.prompts);
  return {
      {"format", "lane-tune-release"},
      {"version", 1},
      {"release", nullptr},
      {"job", c.job},
      {"run", r.id},
      {"gpu", c.gpu},
      {"arch", "sm_" + std::to_string(c.arch)},
      {"checkpoint",
       {{"name", c.checkpoint.name},
        {"architecture", c.checkpoint.architecture},
        {"size", c.checkpoint.size},
        {"digest", c.checkpoint.digest},
        {"file", checkpoint.string()}}},
      {"knobs", parse_or_empty(r.knobs)},
      {"measured",
       {{"median_ms_per_token", r.median_ms},
        {"spread_ms", r.spread_ms},
        {"min_ms", r.min_ms},
        {"max_ms", r.max_ms},
        {"repetitions", r.repetitions},
        {"stage", r.stage},
        {"prefill_ms", r.prefill_ms},
        {"prefill_tok_s", r.prefill_tok_s},
        {"workload_ms", r.workload_ms},
        {"objective_ms", r.objective_ms},
        {"verified", r.verified},
        {"origin", r.origin},
        {"tok_per_s", r.tok_per_s},
        {"worker", r.worker_name}}},
      {"reference",
       {{"logits_hash", r.logits_hash},
        {"logits_hash_is", "xxh64 (seed 0) of the --logits file of prompts.txt"},
        {"rel_l2", r.rel_l2},
        {"argmax_agree", r.argmax_agree},
        {"tokens_equal", r.tokens_equal},
        {"stagger_equal", r.stagger_equal},
        {"prompts", prompts}}},
      {"environment", parse_or_empty(r.environment)},
      {"files",
       {{"source", lt::lane::kSource},
        {"runtime", lt::lane::kRuntimeSource},
        {"sidecar", lt::lane::kSidecar},
        {"description", lt::lane::kDescription},
        {"prompts", "prompts.txt"},
        {"binary", built ? nlohmann::json(lt::lane::kBinary) : nlohmann::json(nullptr)}}},
      {"build", {{"nvcc", built ? nlohmann::json(lt::nvcc_path()) : nlohmann::json(nullptr)}, {"log", nvcc_log}}},
      {"lane_tune", lt::version()},
      {"exported_at", utc_now()},
  };
}

std::string readme(const lt::coord::Candidate& c, const fs::path& checkpoint, bool built) {
  std::string arch = "sm_" + std::to_string(c.arch), ck = checkpoint.string();
  std::string s = "# " + c.checkpoint.name + " for " + c.gpu + " (" + arch + "), from lane-tune job " +
                  std::to_string(c.job) + "\n\n";
  s += "The best verified configuration lane-tune measured for this GPU kind (by the job's objective), frozen: "
       "`lane.cu` (the program), `lane_host.cu` (the host runtime it is linked with), "
       "`lane.sidecar` (its computed constants), `lane` (the binary), `manifest.json` (checkpoint, knobs, figures, "
       "reference checksums, environment).\n\n";
  if (!built) {
    s += "**No binary** (no nvcc here, or --no-build). Build it where CUDA is (the host runtime, then the program "
         "linked with it):\n\n";
    std::istringstream cmds(lt::lane::build_commands(c.arch));
    for (std::string line; std::getline(cmds, line);) s += "    " + line + "\n";
    s += "\n";
  }
  s += "## Run\n\nThe program refuses any checkpoint but its own (size " + std::to_string(c.checkpoint.size) +
       " bytes, content digest " + c.checkpoint.digest + ").\n\n";
  s += "    ./lane " + ck + " lane.sidecar 32 <token> <token> ...     # generate 32 tokens after a prompt\n";
  s += "    ./lane " + ck + " lane.sidecar --prompts prompts.txt      # the prompts it was judged on\n";
  s += "    ./lane " + ck + " lane.sidecar --prompts prompts.txt --profile   # time every launch\n\n";
  s += "It prints `TOKENS:`, `PREFILL_MS:`, `DECODE_MS_PER_TOKEN:` and `DECODE_TOK_PER_S:` lines; exit 2 is a usage "
       "error, 3 a wrong checkpoint or sidecar, 4 a device too small, 1 a CUDA error.\n\n";
  s += "## Check it\n\n    ./lane " + ck +
       " lane.sidecar --prompts prompts.txt --logits logits.f32\n    xxhsum -H1 logits.f32   # expect " +
       c.run.logits_hash +
       " (manifest.json: reference.logits_hash)\n\n(xxhsum is in the xxhash package; the "
       "checksum holds on the GPU kind the release was tuned on.)\n\n";
  s += "Measured: " + std::to_string(c.run.median_ms) + " ms per token (spread " + std::to_string(c.run.spread_ms) +
       ", " + std::to_string(c.run.repetitions) + " repetitions). `lane-tune nightly` re-measures every release.\n";
  return s;
}

void export_release(const Args& a) {
  fs::path out = fs::absolute(a.out);
  std::error_code ec;
  if (fs::exists(out) && !fs::is_directory(out)) throw lt::Error(out.string() + " exists and is not a directory");
  if (fs::is_directory(out) && !fs::is_empty(out, ec) && !a.force)
    throw lt::Error(out.string() + " is not empty; pass --force to overwrite the release there");

  lt::coord::ReleaseClient client(a.coordinator, a.token, 60, a.tls_ca);
  auto c = client.candidate(a.job, a.gpu);
  fs::create_directories(out);
  auto checkpoint = local_checkpoint(a, c, client);

  auto file = lt::gguf::File::open(checkpoint);
  auto model = lt::model::recognize(file);
  auto knobs = lt::knobs::Knobs::from_json(nlohmann::json::parse(c.run.knobs));
  auto program = lt::lane::compile(file, model, knobs, {lt::coord::find_gpu_kind(c.gpu)->sms, c.arch});
  lt::lane::write(program, out);
  std::ofstream(out / "prompts.txt") << prompts_text(c.prompts);

  bool built = false;
  std::string log;
  fs::remove(out / lt::lane::kBinary);
  if (a.no_build) {
    std::fprintf(stderr, "--no-build: the release has no binary (its README says how to build it)\n");
  } else if (lt::nvcc_path().empty()) {
    std::fprintf(stderr, "no nvcc on this machine: the release has no binary (its README says how to build it)\n");
  } else {
    lt::lane::build(out, c.arch, &log);
    built = true;
  }

  auto m = manifest(c, checkpoint, built, log.substr(0, 4000));
  std::ofstream(out / "README.md") << readme(c, checkpoint, built);
  std::ofstream(out / "manifest.json") << m.dump(1) << "\n";
  int64_t id = client.record(c.job, c.gpu, c.run.id, out.string(), m.dump());
  m["release"] = id;
  std::ofstream(out / "manifest.json") << m.dump(1) << "\n";
  std::printf("release %lld: job %lld on %s (sm_%d), %.4f ms/token (spread %.4f, %u reps) -> %s%s\n",
              static_cast<long long>(id), static_cast<long long>(c.job), c.gpu.c_str(), c.arch, c.run.median_ms,
              c.run.spread_ms, c.run.repetitions, out.c_str(), built ? "" : " (no binary)");
}

const bool registered = lt::cli::add_command(
    {44, [](CLI::App& app) {
       auto* c = app.add_subcommand("export", "Freeze a job's best valid configuration for a GPU kind");
       auto a = std::make_shared<Args>();
       c->add_option("job", a->job, "The job")->required();
       c->add_option("--gpu", a->gpu, "The GPU kind (h200, a100, ...)")->required()->transform(lt::cli::gpu_kind());
       c->add_option("-o,--out", a->out, "The release directory")->required();
       c->add_flag("--force", a->force, "Overwrite a non-empty directory");
       c->add_flag("--no-build", a->no_build, "Write the sources only (build on the GPU's machine)");
       c->add_option("--checkpoint", a->checkpoint,
                     "The job's checkpoint here (default: the coordinator's path when readable, else fetched)");
       c->add_option("--coordinator", a->coordinator, "host:port (default $LT_COORDINATOR or 127.0.0.1:7117)");
       c->add_option("--token", a->token, "The coordinator's token (default $LT_TOKEN)");
       c->add_option("--tls-ca", a->tls_ca, "Check a TLS coordinator against this CA certificate (default $LT_TLS_CA)");
       c->callback([a] { export_release(*a); });
     }});
}  // namespace
