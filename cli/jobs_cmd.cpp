// `lane-tune status`, `results`, `best`, `cancel`: a job's progress, its measurements, its winners, its end.
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/knobs.hpp"
#include "coordinator/client.hpp"

namespace {
// The options every client command takes: where the coordinator is and its token.
struct Remote {
  std::string coordinator = lt::coord::default_coordinator();
  std::string token = lt::coord::default_token();
  std::string tls_ca = lt::coord::default_tls_ca();
  void add(CLI::App* c) {
    c->add_option("--coordinator", coordinator, "host:port (default $LT_COORDINATOR or 127.0.0.1:7117)");
    c->add_option("--token", token, "The coordinator's token (default $LT_TOKEN)");
    c->add_option("--tls-ca", tls_ca, "Check a TLS coordinator against this CA certificate (default $LT_TLS_CA)");
  }
};

const bool registered = lt::cli::add_command(
    {42, [](CLI::App& app) {
       {
         auto* c = app.add_subcommand("status", "A job's progress (every job's without JOB)");
         auto r = std::make_shared<Remote>();
         auto job = std::make_shared<int64_t>(0);
         c->add_option("job", *job, "The job");
         r->add(c);
         c->callback([r, job] {
           lt::coord::Client client(r->coordinator, r->token, 30, r->tls_ca);
           if (*job) {
             std::printf("%s", lt::coord::describe(client.status(*job)).c_str());
             return;
           }
           auto jobs = client.list();
           if (jobs.empty()) std::printf("no jobs\n");
           for (auto& s : jobs) std::printf("%s\n", lt::coord::progress_line(s).c_str());
         });
       }
       {
         auto* c = app.add_subcommand("results",
                                      "A job's measured configurations: verified, then screened, then failed, each by "
                                      "the job's objective");
         struct Args : Remote {
           int64_t job = 0;
           std::string gpu;
           uint32_t top = 0;
           bool json = false;
         };
         auto a = std::make_shared<Args>();
         c->add_option("job", a->job, "The job")->required();
         c->add_option("--gpu", a->gpu, "Only this GPU kind");
         c->add_option("--top", a->top, "The first N per GPU kind");
         c->add_flag("--json", a->json, "JSON (the format `lane-tune worker --replay` reads)");
         a->add(c);
         c->callback([a] {
           lt::coord::Client client(a->coordinator, a->token, 30, a->tls_ca);
           auto runs = client.results(a->job, a->gpu, a->top);
           if (a->json)
             std::printf("%s\n", lt::coord::results_json(a->job, runs).dump(1).c_str());
           else
             std::printf("%s", lt::coord::results_table(runs).c_str());
         });
       }
       {
         auto* c = app.add_subcommand("best", "A job's best verified configuration per GPU kind (by its objective)");
         struct Args : Remote {
           int64_t job = 0;
           std::string gpu, knobs_out;
           bool json = false;
         };
         auto a = std::make_shared<Args>();
         c->add_option("job", a->job, "The job")->required();
         c->add_option("--gpu", a->gpu, "Only this GPU kind");
         c->add_flag("--json", a->json, "JSON");
         c->add_option("--knobs", a->knobs_out,
                       "Write the winner's knobs to this file, as `compile --knobs` reads them (needs --gpu where the "
                       "job tunes several kinds)");
         a->add(c);
         c->callback([a] {
           lt::coord::Client client(a->coordinator, a->token, 30, a->tls_ca);
           auto runs = client.best(a->job, a->gpu);
           if (!a->knobs_out.empty()) {
             if (runs.empty()) throw lt::Error("job " + std::to_string(a->job) + " has no verified configuration yet");
             if (runs.size() > 1)
               throw lt::Error("job " + std::to_string(a->job) + " has winners on " + std::to_string(runs.size()) +
                               " GPU kinds: name one with --gpu");
             // Read back through Knobs, so that the file holds every knob (the defaults too) and nothing else.
             const std::string text = lt::knobs::Knobs::from_json(nlohmann::json::parse(runs[0].knobs)).to_json().dump(1);
             std::ofstream out(a->knobs_out);
             out << text << "\n";
             if (!out.flush()) throw lt::Error("cannot write " + a->knobs_out);
           }
           if (a->json) {
             std::printf("%s\n", lt::coord::results_json(a->job, runs).dump(1).c_str());
             return;
           }
           if (runs.empty()) {
             std::printf("no verified configuration yet\n");
             lt::cli::exit_status() = lt::cli::kExitNoConfiguration;
           }
           for (auto& r : runs)
             std::printf("%s %s (%.4f ms/token, spread %.4f, %u reps, %.1f tok/s; objective %.4g ms; %s, %s) %s\n",
                         r.gpu.c_str(), lt::coord::best_figures(r.median_ms, r.prefill_tok_s, r.workload_ms).c_str(),
                         r.median_ms, r.spread_ms, r.repetitions, r.tok_per_s, r.objective_ms,
                         lt::coord::to_string(lt::coord::verdict_of(r)), r.origin.c_str(), r.knobs.c_str());
         });
       }
       {
         auto* c = app.add_subcommand("cancel", "Stop a job; the results so far and its best are kept");
         auto r = std::make_shared<Remote>();
         auto job = std::make_shared<int64_t>(0);
         c->add_option("job", *job, "The job")->required();
         r->add(c);
         c->callback([r, job] {
           lt::coord::Client client(r->coordinator, r->token, 30, r->tls_ca);
           std::printf("%s", lt::coord::describe(client.cancel(*job)).c_str());
         });
       }
     }});
}  // namespace
