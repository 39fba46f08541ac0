// `lane-tune workers`: the coordinator's workers: GPU kind, state, how long since each last called, leases held.
#include <cstdio>

#include "command.hpp"
#include "options.hpp"
#include "output/views.hpp"

namespace {
const bool registered = lt::cli::add_command(
    {47, [](CLI::App& app) {
       auto* c = app.add_subcommand("workers",
                                    "The coordinator's workers: GPU kind, state (busy, idle, gone), last call, leases");
       struct Args : lt::cli::Remote, lt::cli::Output {
         std::string gpu;
         bool all = false;
       };
       auto a = std::make_shared<Args>();
       c->add_option("--gpu", a->gpu, "Only workers of this GPU kind")->transform(lt::cli::gpu_kind());
       c->add_flag("--all", a->all, "Also the workers gone (silent for longer than a lease)");
       a->Remote::add(c);
       a->Output::add(c);
       c->callback([a] {
         const auto workers = a->client().workers(a->gpu, a->all);
         if (workers.empty() && a->format == lt::cli::Format::Table) {
           std::printf("no workers%s%s\n", a->gpu.empty() ? "" : (" of kind " + a->gpu).c_str(),
                       a->all ? "" : " (--all: those gone too)");
           return;
         }
         a->print(lt::cli::workers_table(workers));
       });
     }});
}  // namespace
