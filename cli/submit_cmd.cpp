// `lane-tune submit`: starts a tuning job for a checkpoint on some GPU kinds, optionally waiting with live progress.
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <thread>

#include "command.hpp"
#include "compiler/error.hpp"
#include "coordinator/client.hpp"
#include "coordinator/objective.hpp"
#include "coordinator/space.hpp"
#include "coordinator/strategy.hpp"
#include "options.hpp"
#include "output/views.hpp"

namespace {

using lt::cli::accepted_by;

const bool registered = lt::cli::add_command(
    {41, [](CLI::App& app) {
       auto* c = app.add_subcommand("submit", "Start tuning a checkpoint for some GPU kinds");
       struct Args {
         std::string file, gpus, strategy = "model", objective = "workload", workload, time_budget,
                                 coordinator = lt::coord::default_coordinator(), token = lt::coord::default_token(),
                                 tls_ca = lt::coord::default_tls_ca();
         uint32_t budget = 0, context = 0;
         uint64_t seed = 0;
         bool wait = false, by_path = false;
       };
       auto a = std::make_shared<Args>();
       c->add_option("file", a->file, "The GGUF checkpoint")->required();
       c->add_option("--gpus", a->gpus, "GPU kinds to tune for, comma-separated (a100,h100,h200,l4,...)")
           ->required()
           ->transform(lt::cli::gpu_kinds());
       c->add_option("--strategy", a->strategy,
                     "model (a cost model learnt from the job's measurements; screens, then verifies the best), grid, "
                     "random or halving")
           ->capture_default_str()
           ->check(accepted_by([](std::string& v) {
             if (!lt::coord::known_strategy(v))
               throw lt::Error("unknown strategy '" + v + "' (model, grid, random, halving)");
           }));
       c->add_option("--objective", a->objective,
                     "What to minimize: workload (time to the workload's last token), decode (ms per token) or "
                     "prefill (the workload prompt's time)")
           ->capture_default_str()
           ->check(accepted_by([](std::string& v) { lt::coord::parse_objective(v); }));
       c->add_option("--workload", a->workload,
                     "The workload timed, prompt=512,gen=128 by default (shrunk to fit a shorter context)")
           ->check(accepted_by([](std::string& v) { lt::coord::parse_workload(v); }));
       c->add_option("--budget", a->budget,
                     "Configurations per GPU kind (model: screened, 0: 256; random, halving: 0: every point)");
       c->add_option("--time-budget", a->time_budget, "Stop the job after this long (90s, 30m, 2h); the best is kept")
           ->check(accepted_by([](std::string& v) { lt::coord::parse_duration(v); }));
       c->add_option("--seed", a->seed, "The seed of the random draws and the prompts");
       c->add_option("--context", a->context,
                     "Positions the lanes hold, up to the model's trained context (default: the model's, at most "
                     "4096); the workload must fit them")
           ->check(CLI::Range(1u, 1u << 24));
       c->add_flag("--path", a->by_path, "Do not upload: the coordinator reads FILE itself (same path there)");
       c->add_flag("--wait", a->wait, "Wait for the job, with a live progress line");
       c->add_option("--coordinator", a->coordinator, "host:port (default $LT_COORDINATOR or 127.0.0.1:7117)");
       c->add_option("--token", a->token, "The coordinator's token (default $LT_TOKEN)");
       c->add_option("--tls-ca", a->tls_ca, "Check a TLS coordinator against this CA certificate (default $LT_TLS_CA)");
       c->callback([a] {
         // The values were checked as the command line was read; the file is checked here, before the coordinator is
         // called: a mistake costs no upload.
         if (!a->by_path && !std::filesystem::exists(a->file)) throw lt::NotFound("no checkpoint at " + a->file);
         lt::coord::JobSpec s;
         s.objective = a->objective;
         if (!a->workload.empty()) s.workload = lt::coord::parse_workload(a->workload);
         lt::coord::Client client(a->coordinator, a->token, 30, a->tls_ca);
         std::stringstream gpus(a->gpus);
         for (std::string g; std::getline(gpus, g, ',');)
           if (!g.empty()) s.gpus.push_back(g);
         s.strategy = a->strategy;
         s.budget = a->budget;
         s.seed = a->seed;
         s.context = a->context;
         if (!a->time_budget.empty()) s.time_budget_s = lt::coord::parse_duration(a->time_budget);
         bool tty = isatty(STDERR_FILENO);
         if (a->by_path) {
           s.path = std::filesystem::absolute(a->file).string();
         } else {
           s.digest = client.upload(a->file, [tty](uint64_t done, uint64_t total) {
             if (tty) std::fprintf(stderr, "\ruploading %.0f%%", total ? 100.0 * double(done) / double(total) : 100.0);
           });
           if (tty) std::fprintf(stderr, "\r\033[K");
         }
         auto st = client.submit(s);
         std::printf("job %lld\n", static_cast<long long>(st.job.id));
         std::fflush(stdout);
         if (!a->wait) return;
         lt::coord::JobStatus last = st;
         // A coordinator that restarts mid-job is waited for (up to two minutes at a time).
         for (int lost_s = 0; last.job.state == "running";) {
           try {
             client.watch(st.job.id, [&](const lt::coord::JobStatus& now) {
               last = now;
               lost_s = 0;
               if (tty)
                 std::fprintf(stderr, "\r\033[K%s", lt::cli::progress_line(now).c_str());
               else
                 std::fprintf(stderr, "%s\n", lt::cli::progress_line(now).c_str());
               return true;
             });
           } catch (const lt::coord::CallError& e) {
             if (e.code() != "UNAVAILABLE" || ++lost_s > 120) throw;
             std::this_thread::sleep_for(std::chrono::seconds(1));
           }
         }
         if (tty) std::fprintf(stderr, "\n");
         std::printf("%s", lt::cli::render(lt::cli::job_table(last), lt::cli::Format::Table).c_str());
         lt::cli::exit_status() = last.job.state == "done" ? lt::cli::kExitOk : lt::cli::kExitFailed;
       });
     }});
}  // namespace
