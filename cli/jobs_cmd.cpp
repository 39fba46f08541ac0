// `lane-tune status`, `results`, `best`, `cancel`: a job's progress, its measurements, its winners, its end.
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/knobs.hpp"
#include "options.hpp"
#include "output/views.hpp"

namespace {
using lt::cli::Output;
using lt::cli::Remote;

// Writes the winner's knobs to `path` as `compile --knobs` reads them: every knob (the defaults too), nothing else.
// REQUIRES: a winner.
void write_knobs(int64_t job, const std::vector<lt::db::Run>& winners, const std::string& path) {
  if (winners.size() > 1)
    throw lt::Error("job " + std::to_string(job) + " has winners on " + std::to_string(winners.size()) +
                    " GPU kinds: name one with --gpu");
  const std::string text = lt::knobs::Knobs::from_json(nlohmann::json::parse(winners[0].knobs)).to_json().dump(1);
  std::ofstream out(path);
  out << text << "\n";
  if (!out.flush()) throw lt::Error("cannot write " + path);
}

const bool registered = lt::cli::add_command(
    {42, [](CLI::App& app) {
       {
         auto* c = app.add_subcommand("status", "A job's progress (every job's without JOB), a row per GPU kind");
         struct Args : Remote, Output {
           int64_t job = 0;
         };
         auto a = std::make_shared<Args>();
         c->add_option("job", a->job, "The job");
         a->Remote::add(c);
         a->Output::add(c);
         c->callback([a] {
           auto client = a->client();
           if (a->job) {
             a->print(lt::cli::job_table(client.status(a->job)));
             return;
           }
           auto jobs = client.list();
           if (jobs.empty() && a->format == lt::cli::Format::Table) {
             std::printf("no jobs\n");
             return;
           }
           a->print(lt::cli::jobs_table(jobs));
         });
       }
       {
         auto* c = app.add_subcommand("results",
                                      "A job's measured configurations: verified, then screened, then failed, each by "
                                      "the job's objective");
         struct Args : Remote, Output {
           int64_t job = 0;
           std::string gpu;
           uint32_t top = 0;
         };
         auto a = std::make_shared<Args>();
         c->add_option("job", a->job, "The job")->required();
         c->add_option("--gpu", a->gpu, "Only this GPU kind")->transform(lt::cli::gpu_kind());
         c->add_option("--top", a->top, "The first N per GPU kind");
         a->Remote::add(c);
         a->Output::add(c);
         c->footer("--format json prints the recording `lane-tune worker --replay` reads (every field, profiles too).");
         c->callback([a] {
           auto client = a->client();
           auto runs = client.results(a->job, a->gpu, a->top);
           if (a->format == lt::cli::Format::Json) {
             std::printf("%s\n", lt::coord::results_json(a->job, runs).dump(1).c_str());
             return;
           }
           a->print(lt::cli::results_table(runs, client.best(a->job, a->gpu)));
         });
       }
       {
         auto* c = app.add_subcommand("best", "A job's best verified configuration per GPU kind (by its objective)");
         struct Args : Remote, Output {
           int64_t job = 0;
           std::string gpu, knobs_out;
           bool profile = false;
         };
         auto a = std::make_shared<Args>();
         c->add_option("job", a->job, "The job")->required();
         c->add_option("--gpu", a->gpu, "Only this GPU kind")->transform(lt::cli::gpu_kind());
         a->Output::add(c);
         c->add_flag("--profile", a->profile, "With --format json: each winner's per-launch profile too (long)");
         c->add_option("--knobs", a->knobs_out,
                       "Write the winner's knobs to this file, as `compile --knobs` reads them (needs --gpu where the "
                       "job tunes several kinds)");
         a->Remote::add(c);
         c->callback([a] {
           auto runs = a->client().best(a->job, a->gpu);
           if (!a->knobs_out.empty() && !runs.empty()) write_knobs(a->job, runs, a->knobs_out);
           if (!a->knobs_out.empty() && runs.empty())
             std::fprintf(stderr, "lane-tune: no knobs written to %s: no verified configuration yet\n",
                          a->knobs_out.c_str());
           if (a->format == lt::cli::Format::Json) {
             std::printf("%s\n", lt::coord::results_json(a->job, runs, a->profile).dump(1).c_str());
           } else if (runs.empty() && a->format == lt::cli::Format::Table) {
             std::printf("no verified configuration yet\n");
           } else {
             a->print(lt::cli::best_table(runs));
           }
           if (runs.empty()) lt::cli::exit_status() = lt::cli::kExitNoConfiguration;
         });
       }
       {
         auto* c = app.add_subcommand("cancel", "Stop a job; the results so far and its best are kept");
         struct Args : Remote, Output {
           int64_t job = 0;
         };
         auto a = std::make_shared<Args>();
         c->add_option("job", a->job, "The job")->required();
         a->Remote::add(c);
         a->Output::add(c, false);
         c->callback([a] { a->print(lt::cli::job_table(a->client().cancel(a->job))); });
       }
     }});
}  // namespace
