// `lane-tune synth`: writes a checkpoint with random weights at a preset model's shapes.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/synth.hpp"

namespace {

// Progress on a terminal's stderr: the share written of the total.
void show_progress(uint64_t done, uint64_t total) {
  std::fprintf(stderr, "\r%5.1f%% of %.1f MB", 100.0 * done / std::max<uint64_t>(total, 1), total / 1e6);
  if (done == total) std::fprintf(stderr, "\r%*s\r", 40, "");
}

constexpr const char* kPureHelp =
    "Every matrix in the type (llama.cpp's quantize --pure); without it the type is laid out as llama.cpp's quantize "
    "tool writes its file type (the output in q6_k, some attn_v and ffn_down in more bits, ...)";

// The type --type names, laid out as --pure says; throws lt::Error for an unknown type or a mix asked to be pure.
lt::synth::MatrixType matrix_type(const std::string& name, bool pure) {
  auto type = lt::synth::parse_matrix_type(name);
  if (!type) throw lt::Error("unknown type '" + name + "' (use " + lt::synth::kMatrixTypeNames + ")");
  if (pure && type->mixed) throw lt::Error("--pure: " + name + " is llama.cpp's mix of its type, not one type");
  type->layout = pure ? lt::synth::Layout::Pure : lt::synth::Layout::Llama;
  return *type;
}

const bool registered = lt::cli::add_command(
    {10, [](CLI::App& app) {
       auto* c = app.add_subcommand("synth", "Write a GGUF checkpoint with random weights at a real model's shapes");
       struct Args {
         std::string preset, shape, type = "q8_0", out;
         uint64_t seed = 1;
         uint32_t layers = 0;
         bool quiet = false, list = false, pure = false;
       };
       auto args = std::make_shared<Args>();
       c->add_option("--preset", args->preset, "The model shape (see --list)");
       c->add_option("--shape", args->shape,
                     "A shape of your own: a JSON object of fields (architecture, layers, d_model, heads, kv_heads, "
                     "head_dim, ffn, vocab, context, ...; `--list` shows the presets'), or a file holding one; "
                     "over --preset's where both are given");
       c->add_option("--type", args->type, std::string("The matrices' type: ") + lt::synth::kMatrixTypeNames)
           ->capture_default_str();
       c->add_flag("--pure", args->pure, kPureHelp);
       c->add_option("--seed", args->seed, "The random seed (same seed, same file)")->capture_default_str();
       c->add_option("--layers", args->layers,
                     "Keep the preset's first N layers only (its other shapes as they are; default: all)")
           ->check(CLI::Range(1u, 4096u));
       c->add_option("-o,--output", args->out, "The checkpoint to write");
       c->add_flag("--list", args->list, "List the presets and exit");
       c->add_flag("-q,--quiet", args->quiet, "Print nothing but errors");
       c->callback([args] {
         if (args->list) {
           for (const auto& p : lt::synth::presets())
             std::printf("%-14s %-9s layers=%u d_model=%u heads=%u/%u head_dim=%u ffn=%u vocab=%u%s\n", p.name.c_str(),
                         p.architecture.c_str(), p.layers, p.d_model, p.heads, p.kv_heads, p.head_dim, p.ffn, p.vocab,
                         p.experts
                             ? (" experts=" + std::to_string(p.experts) + "/" + std::to_string(p.experts_used)).c_str()
                             : "");
           return;
         }
         if ((args->preset.empty() && args->shape.empty()) || args->out.empty())
           throw lt::Error("synth needs --preset NAME (or --shape JSON) and -o FILE");
         lt::synth::Options o;
         o.preset = args->preset;
         if (!args->shape.empty()) {
           std::string text = args->shape;
           const size_t at = text.find_first_not_of(" \t\r\n");
           if (at == std::string::npos || (text[at] != '{' && text[at] != '[')) {  // (a file's path)
             std::ifstream f(text);
             if (!f)
               throw lt::Error("synth --shape: cannot read " + text + " (give a JSON object or a file holding one)");
             text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
           }
           o.shape = lt::synth::parse_shape(
               text, args->preset.empty() ? lt::synth::Preset{} : lt::synth::preset(args->preset));
           o.preset = o.shape->name;
         }
         o.seed = args->seed;
         o.layers = args->layers;
         const auto type = matrix_type(args->type, args->pure);
         o.type = type.type;
         o.mixed = type.mixed;
         o.layout = type.layout;
         if (!args->quiet && isatty(STDERR_FILENO)) o.progress = show_progress;
         const auto start = std::chrono::steady_clock::now();
         const uint64_t size = lt::synth::write(o, args->out);
         const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
         if (!args->quiet)
           std::printf("wrote %s: %s, %s, %.1f MB in %.2f s (%.0f MB/s)\n", args->out.c_str(), o.preset.c_str(),
                       (std::string(lt::ggml::traits_of(o.type).name) + (o.mixed ? "_m" : "")).c_str(), size / 1e6, s,
                       size / 1e6 / std::max(s, 1e-9));
       });
     }});
// `lane-tune quantize`: a checkpoint's matrices requantized to another type (a trained f16 or q8_0 checkpoint in
// Q4_K_M, say), as llama.cpp's quantize tool lays the type out.
const bool registered_quantize = lt::cli::add_command(
    {11, [](CLI::App& app) {
       auto* c = app.add_subcommand("quantize", "Write a checkpoint with its matrices requantized to another type");
       struct Args {
         std::string in, type, out;
         bool quiet = false, pure = false;
       };
       auto args = std::make_shared<Args>();
       c->add_option("file", args->in, "The GGUF checkpoint to read")->required();
       c->add_option("--type", args->type, std::string("The matrices' type: ") + lt::synth::kMatrixTypeNames)
           ->required();
       c->add_flag("--pure", args->pure, kPureHelp);
       c->add_option("-o,--output", args->out, "The checkpoint to write")->required();
       c->add_flag("-q,--quiet", args->quiet, "Print nothing but errors");
       c->callback([args] {
         const auto type = matrix_type(args->type, args->pure);
         if (std::filesystem::exists(args->out) && std::filesystem::equivalent(args->in, args->out))
           throw lt::Error("quantize writes a new file: -o must not be the checkpoint it reads");
         const lt::gguf::File in = lt::gguf::File::open(args->in);
         lt::synth::QuantizeOptions o;
         o.type = type;
         if (!args->quiet && isatty(STDERR_FILENO)) o.progress = show_progress;
         const auto start = std::chrono::steady_clock::now();
         const uint64_t size = lt::synth::quantize(in, args->out, o);
         const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
         if (!args->quiet)
           std::printf("wrote %s: %s as %s, %.1f MB in %.2f s\n", args->out.c_str(), args->in.c_str(),
                       (std::string(lt::ggml::traits_of(o.type.type).name) + (o.type.mixed ? "_m" : "")).c_str(),
                       size / 1e6, s);
       });
     }});

}  // namespace
