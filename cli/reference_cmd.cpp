// `lane-tune reference`: the CPU reference's greedy generation for a prompt (or a lane's prompts file), printed
// and written as a lane does.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/model.hpp"
#include "compiler/reference.hpp"

namespace {

// What `lane-tune reference` was asked to run.
struct ReferenceArgs {
  std::string checkpoint;
  int n_gen = 16;
  std::string logits;
  std::string prompts;
  unsigned threads = 0;
  std::vector<int32_t> prompt;
};

// One prompt to run: its tokens and how many to generate.
struct Job {
  int n_gen;
  std::vector<int32_t> prompt;
};

// The prompts of a lane's `--prompts` file: a line a prompt, `<n_gen> <token> ...`; blank lines skipped.
std::vector<Job> read_prompts(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw lt::Error("cannot read " + path);
  std::vector<Job> jobs;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    std::vector<long long> v;
    for (long long x; words >> x;) v.push_back(x);
    if (!words.eof()) throw lt::Error(path + ":" + std::to_string(number) + ": not a list of integers");
    if (v.empty()) continue;
    if (v.size() < 2 || v[0] < 1)
      throw lt::Error(path + ":" + std::to_string(number) + ": expected `<n_gen> <token> ...` with n_gen >= 1");
    Job job{static_cast<int>(std::min<long long>(v[0], 1 << 20)), {}};
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] < INT32_MIN || v[i] > INT32_MAX)
        throw lt::Error(path + ":" + std::to_string(number) + ": token " + std::to_string(v[i]) + " is out of range");
      job.prompt.push_back(static_cast<int32_t>(v[i]));
    }
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) throw lt::Error(path + " holds no prompt");
  return jobs;
}

// Generates the prompts (together: Reference::generate's requests), prints each one's `TOKENS: ...` line and appends
// its logits rows (little-endian f32) to the --logits file, as a lane does.
void run_reference(const ReferenceArgs& a) {
  std::vector<Job> jobs;
  if (!a.prompts.empty()) {
    if (!a.prompt.empty()) throw lt::Error("give the prompt's tokens or --prompts, not both");
    jobs = read_prompts(a.prompts);
  } else {
    if (a.prompt.empty()) throw lt::Error("reference needs the prompt's tokens (or --prompts FILE)");
    jobs.push_back({a.n_gen, a.prompt});
  }
  auto file = lt::gguf::File::open(a.checkpoint);
  auto model = lt::model::recognize(file);
  lt::reference::Reference ref(file, model, a.threads);
  std::unique_ptr<FILE, int (*)(FILE*)> out(nullptr, std::fclose);
  if (!a.logits.empty()) {
    out.reset(std::fopen(a.logits.c_str(), "wb"));
    if (!out) throw lt::Error("cannot write " + a.logits);
  }
  std::vector<lt::reference::Reference::Request> requests;
  for (const Job& job : jobs) requests.push_back({job.prompt, job.n_gen});
  for (const auto& g : ref.generate(requests)) {
    if (out && std::fwrite(g.logits.data(), sizeof(float), g.logits.size(), out.get()) != g.logits.size())
      throw lt::Error("cannot write " + a.logits);
    std::string line = "TOKENS:";
    for (int32_t t : g.tokens) line += " " + std::to_string(t);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  if (out && std::fflush(out.get()) != 0) throw lt::Error("cannot write " + a.logits);
}

const bool registered = lt::cli::add_command(
    {20, [](CLI::App& app) {
       auto args = std::make_shared<ReferenceArgs>();
       auto* c = app.add_subcommand(
           "reference", "Run the CPU reference (f64) on a prompt: prefill it, generate greedily, print TOKENS:");
       c->add_option("checkpoint", args->checkpoint, "GGUF checkpoint")->required()->check(CLI::ExistingFile);
       c->add_option("tokens", args->prompt, "the prompt's token ids");
       c->add_option("--n-gen", args->n_gen, "tokens to generate (logits rows written)")->check(CLI::Range(1, 1 << 20));
       c->add_option("--logits", args->logits, "write every generated position's logits here (little-endian f32)");
       c->add_option("--prompts", args->prompts,
                     "run a lane's prompts file instead: a line a prompt, `<n_gen> <token> ...`");
       c->add_option("--threads", args->threads, "worker threads (0: every core)");
       c->callback([args] { run_reference(*args); });
     }});

}  // namespace
