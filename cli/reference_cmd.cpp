// `lane-tune reference`: the CPU reference's greedy generation for a prompt, printed and written as a lane does.
#include <cstdio>
#include <memory>
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
  unsigned threads = 0;
  std::vector<int32_t> prompt;
};

// Generates, prints `TOKENS: ...` and writes the logits rows (little-endian f32) when asked.
void run_reference(const ReferenceArgs& a) {
  auto file = lt::gguf::File::open(a.checkpoint);
  auto model = lt::model::recognize(file);
  lt::reference::Reference ref(file, model, a.threads);
  auto g = ref.generate(a.prompt, a.n_gen);
  if (!a.logits.empty()) {
    std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(a.logits.c_str(), "wb"), std::fclose);
    if (!out) throw lt::Error("cannot write " + a.logits);
    if (std::fwrite(g.logits.data(), sizeof(float), g.logits.size(), out.get()) != g.logits.size() ||
        std::fflush(out.get()) != 0)
      throw lt::Error("cannot write " + a.logits);
  }
  std::string line = "TOKENS:";
  for (int32_t t : g.tokens) line += " " + std::to_string(t);
  std::printf("%s\n", line.c_str());
}

const bool registered = lt::cli::add_command(
    {20, [](CLI::App& app) {
       auto args = std::make_shared<ReferenceArgs>();
       auto* c = app.add_subcommand(
           "reference", "Run the CPU reference (f64) on a prompt: prefill it, generate greedily, print TOKENS:");
       c->add_option("checkpoint", args->checkpoint, "GGUF checkpoint")->required()->check(CLI::ExistingFile);
       c->add_option("tokens", args->prompt, "the prompt's token ids")->required();
       c->add_option("--n-gen", args->n_gen, "tokens to generate (logits rows written)")->check(CLI::Range(1, 1 << 20));
       c->add_option("--logits", args->logits, "write every generated position's logits here (little-endian f32)");
       c->add_option("--threads", args->threads, "worker threads (0: every core)");
       c->callback([args] { run_reference(*args); });
     }});

}  // namespace
