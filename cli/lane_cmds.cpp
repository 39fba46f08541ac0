// `lane-tune knobs`, `compile` and `build`: the knob space of a checkpoint, a lane emitted for one configuration,
// and its program built with nvcc.
#include <cstdio>
#include <fstream>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/lane.hpp"
#include "compiler/model.hpp"

namespace {

// Reads a knobs file (JSON), or the defaults when `path` is empty.
lt::knobs::Knobs read_knobs(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream f(path);
  if (!f) throw lt::Error("cannot read the knobs file " + path);
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  return lt::knobs::Knobs::from_json(lt::knobs::Knobs::parse(text, path));
}

void print_space(const lt::knobs::Space& s) {
  std::printf("knob space for %s (%s), %d SMs, sm_%d: %zu points\n", s.model.name.c_str(), s.model.architecture.c_str(),
              s.target.sms, s.target.arch, s.size());
  for (const auto& d : s.domains) {
    std::string values;
    for (const auto& v : d.values) values += (values.empty() ? "" : ", ") + v.dump();
    std::printf("  %-20s {%s}\n  %-20s %s\n", d.name.c_str(), values.c_str(), "", d.help.c_str());
  }
  std::printf("constraints:\n");
  for (const auto& c : s.constraints) std::printf("  - %s\n", c.c_str());
}

const bool registered = lt::cli::add_command(
    {30, [](CLI::App& app) {
       {
         auto* c =
             app.add_subcommand("knobs", "Print the knob space of a checkpoint for a GPU (domains and constraints)");
         auto file = std::make_shared<std::string>();
         auto sms = std::make_shared<int>(132);
         auto arch = std::make_shared<int>(90);
         auto json = std::make_shared<bool>(false);
         c->add_option("FILE", *file, "the GGUF checkpoint")->required()->check(CLI::ExistingFile);
         c->add_option("--sms", *sms, "the GPU's multiprocessors")->check(CLI::Range(1, 1024));
         c->add_option("--arch", *arch, "the GPU's compute capability (90: sm_90)")->check(CLI::Range(50, 120));
         c->add_flag("--json", *json, "print JSON");
         c->callback([=] {
           auto f = lt::gguf::File::open(*file);
           auto m = lt::model::recognize(f);
           lt::model::check_lane_supports(m);
           auto s = lt::knobs::space(m, {*sms, *arch});
           if (*json)
             std::printf("%s\n", s.to_json().dump(2).c_str());
           else
             print_space(s);
         });
       }
       {
         auto* c = app.add_subcommand("compile", "Emit the lane (lane.cu, its sidecar, lane.json) of a checkpoint");
         auto file = std::make_shared<std::string>();
         auto knobs = std::make_shared<std::string>();
         auto out = std::make_shared<std::string>();
         auto sms = std::make_shared<int>(132);
         auto arch = std::make_shared<int>(90);
         c->add_option("FILE", *file, "the GGUF checkpoint")->required()->check(CLI::ExistingFile);
         c->add_option("--knobs", *knobs, "a JSON file of knobs (defaults for those absent)")->check(CLI::ExistingFile);
         c->add_option("-o,--out", *out, "the lane's directory")->required();
         c->add_option("--sms", *sms, "the GPU's multiprocessors")->check(CLI::Range(1, 1024));
         c->add_option("--arch", *arch, "the GPU's compute capability")->check(CLI::Range(50, 120));
         c->callback([=] {
           auto f = lt::gguf::File::open(*file);
           auto m = lt::model::recognize(f);
           lt::model::check_lane_supports(m);
           auto p = lt::lane::compile(f, m, read_knobs(*knobs), {*sms, *arch});
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
