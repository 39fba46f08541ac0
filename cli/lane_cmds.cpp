// `lane-tune knobs`, `compile` and `build`: the knob space of a checkpoint, a lane emitted for one configuration,
// and its program built with nvcc.
#include <cstdio>
#include <fstream>
#include <random>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane.hpp"
#include "compiler/model.hpp"
#include "coordinator/space.hpp"
#include "options.hpp"
#include "output/units.hpp"

namespace {

// The GPU a lane is for: the kind named (its multiprocessors and compute capability), else --sms and --arch.
lt::knobs::Target target(const std::string& gpu, int sms, int arch) {
  if (gpu.empty()) return {sms, arch};
  const lt::coord::GpuKind* kind = lt::coord::find_gpu_kind(gpu);  // (canonical: the option's check made it so)
  return {kind->sms, kind->arch};
}

// Reads a knobs file (JSON), or the defaults when `path` is empty.
lt::knobs::Knobs read_knobs(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream f(path);
  if (!f) throw lt::Error("cannot read the knobs file " + path);
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  return lt::knobs::Knobs::from_json(lt::knobs::Knobs::parse(text, path));
}

// The knob space as a table: a knob a row, its values and what it does; the constraints under it.
lt::cli::Table space_table(const lt::knobs::Space& s) {
  lt::cli::Table t;
  t.columns = {{"knob", "knob"},
               {"values", "values", false, lt::cli::Audience::Everyone, 32, true},
               {"help", "what it does", false, lt::cli::Audience::Everyone, 64, true}};
  for (const auto& d : s.domains) {
    std::string values;
    for (const auto& v : d.values)
      values += (values.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
    t.add({lt::cli::text(d.name), {values, nlohmann::json(d.values)}, lt::cli::text(d.help)});
  }
  t.notes.push_back("knob space for " + s.model.name + " (" + s.model.architecture + "), " +
                    std::to_string(s.target.sms) + " SMs, sm_" + std::to_string(s.target.arch) + ": " +
                    lt::cli::thousands(double(s.size())) + " points");
  for (const auto& c : s.constraints) t.notes.push_back("constraint: " + c);
  return t;
}

const bool registered = lt::cli::add_command(
    {30, [](CLI::App& app) {
       {
         auto* c =
             app.add_subcommand("knobs", "Print the knob space of a checkpoint for a GPU (domains and constraints)");
         auto file = std::make_shared<std::string>();
         auto sms = std::make_shared<int>(132);
         auto arch = std::make_shared<int>(90);
          auto context = std::make_shared<int>(0);
          auto gpu = std::make_shared<std::string>();
          auto out = std::make_shared<lt::cli::Output>();
          c->add_option("FILE", *file, "the GGUF checkpoint")->required()->check(CLI::ExistingFile);
          auto* sms_opt = c->add_option("--sms", *sms, "the GPU's multiprocessors")->check(CLI::Range(1, 1024));
          auto* arch_opt =
              c->add_option("--arch", *arch, "the GPU's compute capability (90: sm_90)")->check(CLI::Range(50, 120));
          c->add_option("--gpu", *gpu, "a GPU kind (h200, A100, ...): its multiprocessors and compute capability")
              ->transform(lt::cli::gpu_kind())
              ->excludes(sms_opt)
              ->excludes(arch_opt);
          c->add_option("--context", *context,
                        "positions the lanes hold, up to the model's trained context (default: the model's, at most "
                        "4096)")
              ->check(CLI::Range(1, 1 << 24));
          auto sample = std::make_shared<int>(0);
          auto seed = std::make_shared<uint64_t>(1);
          auto where = std::make_shared<std::string>();
          c->add_option("--sample", *sample,
                        "print N valid configurations drawn uniformly from the space (one JSON object a line) in "
                        "place of the space")
              ->check(CLI::Range(1, 1000000));
          c->add_option("--seed", *seed, "the draws' seed (same seed, same draws)")->capture_default_str();
          c->add_option("--where", *where,
                        "narrow the space first: a JSON object of knobs, each a value or a list of values "
                        "(e.g. {\"numerics\": \"int8\", \"max_chunk\": [64, 256]})");
          out->add(c);
          c->callback([=] {
            auto f = lt::gguf::File::open(*file);
            lt::knobs::Target t = target(*gpu, *sms, *arch);
            t.context = *context;
            auto s = lt::knobs::space(lt::model::recognize(f), t);
            if (!where->empty()) lt::knobs::narrow(s, lt::knobs::Knobs::parse(*where, "--where"));
            if (*sample > 0) {
              std::mt19937_64 rng(*seed);
              for (const auto& k : s.sample_exact(rng, size_t(*sample))) std::printf("%s\n", k.key().c_str());
              return;
            }
            if (out->format == lt::cli::Format::Json)
             std::printf("%s\n", s.to_json().dump(2).c_str());
           else
             out->print(space_table(s));
         });
       }
       {
         auto* c = app.add_subcommand("compile", "Emit the lane (lane.cu, its sidecar, lane.json) of a checkpoint");
         auto file = std::make_shared<std::string>();
         auto knobs = std::make_shared<std::string>();
         auto out = std::make_shared<std::string>();
         auto sms = std::make_shared<int>(132);
         auto arch = std::make_shared<int>(90);
          auto context = std::make_shared<int>(0);
          auto gpu = std::make_shared<std::string>();
         c->add_option("FILE", *file, "the GGUF checkpoint")->required()->check(CLI::ExistingFile);
         c->add_option("--knobs", *knobs,
                       "a JSON file of knobs (defaults for those absent), as `best JOB --knobs FILE` writes it")
             ->check(CLI::ExistingFile);
         c->add_option("-o,--out", *out, "the lane's directory")->required();
          auto* sms_opt = c->add_option("--sms", *sms, "the GPU's multiprocessors")->check(CLI::Range(1, 1024));
          auto* arch_opt = c->add_option("--arch", *arch, "the GPU's compute capability")->check(CLI::Range(50, 120));
          c->add_option("--gpu", *gpu, "a GPU kind (h200, A100, ...): its multiprocessors and compute capability")
              ->transform(lt::cli::gpu_kind())
              ->excludes(sms_opt)
              ->excludes(arch_opt);
          c->add_option("--context", *context,
                        "positions the lane holds, up to the model's trained context (default: the knobs' context "
                        "knob, else the model's at most 4096)")
              ->check(CLI::Range(1, 1 << 24));
          c->callback([=] {
            auto f = lt::gguf::File::open(*file);
            auto m = lt::model::recognize(f);
            lt::knobs::Knobs k = read_knobs(*knobs);
            if (*context) k.context = *context;
            auto p = lt::lane::compile(f, m, k, target(*gpu, *sms, *arch));
           lt::lane::write(p, *out);
           std::printf("wrote %s/%s (%zu bytes), its host runtime %s and its sidecar (%zu bytes)\n", out->c_str(),
                       lt::lane::kSource, p.cu.size(), lt::lane::kRuntimeSource, p.sidecar.size());
         });
       }
       {
         auto* c = app.add_subcommand("build",
                                      "Build a lane's program with nvcc, linked with its host runtime (compiled once, "
                                      "cached in ~/.cache/lane-tune/lanes/runtime)");
         auto dir = std::make_shared<std::string>();
         auto arch = std::make_shared<std::string>("sm_90");
         c->add_option("DIR", *dir, "the lane's directory (from lane-tune compile)")
             ->required()
             ->check(CLI::ExistingDirectory);
         c->add_option("--arch", *arch, "the GPU architecture: sm_80, sm_90, ...");
         c->callback([=] {
           if (arch->rfind("sm_", 0) != 0) throw lt::Error("--arch takes sm_NN, not " + *arch);
           int a = 0;
           try {
             a = std::stoi(arch->substr(3));
           } catch (...) {
             throw lt::Error("--arch takes sm_NN, not " + *arch);
           }
           auto bin = lt::lane::build(*dir, a);
           std::printf("built %s\n", bin.c_str());
         });
       }
     }});

}  // namespace
