// `lane-tune env`: what this installation can do here (version, nvcc).
#include <cstdio>
#include <filesystem>

#include "command.hpp"
#include "compiler/version.hpp"
#include "options.hpp"

namespace {
const bool registered = lt::cli::add_command(
    {90, [](CLI::App& app) {
       auto* c = app.add_subcommand("env", "Print lane-tune's version and the nvcc it builds lanes with");
       auto out = std::make_shared<lt::cli::Output>();
       out->add(c, false);
       c->callback([out] {
         const std::string nvcc = lt::nvcc_path();
         const bool there = !nvcc.empty() && std::filesystem::exists(nvcc);
         lt::cli::Table t;
         t.columns = {{"version", "version"}, {"nvcc", "nvcc"}};
         t.add({lt::cli::text(lt::version()),
                {nvcc.empty() ? "(none: lanes cannot be built here)"
                 : there      ? nvcc
                              : "(configured but missing)",
                 there ? nlohmann::json(nvcc) : nlohmann::json(nullptr)}});
         out->print(t);
       });
     }});
}  // namespace
