// `lane-tune env`: what this installation can do here (version, nvcc).
#include <cstdio>
#include <filesystem>

#include "command.hpp"
#include "compiler/version.hpp"

namespace {
const bool registered = lt::cli::add_command(
    {90, [](CLI::App& app) {
       auto* c = app.add_subcommand("env", "Print lane-tune's version and the nvcc it builds lanes with");
       c->callback([] {
         std::string nvcc = lt::nvcc_path();
         std::printf("version: %s\n", lt::version());
         std::printf("nvcc: %s\n", nvcc.empty()
                                       ? "(none: lanes cannot be built here)"
                                       : (std::filesystem::exists(nvcc) ? nvcc.c_str() : "(configured but missing)"));
       });
     }});
}  // namespace
