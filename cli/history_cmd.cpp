// `lane-tune history` and `lane-tune compare`: jobs' best figures over time, and a job against an earlier one, on the
// runs each job measured itself (nightly, reused and replayed runs left out).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "command.hpp"
#include "compiler/digest.hpp"
#include "compiler/error.hpp"
#include "options.hpp"
#include "output/views.hpp"

namespace {

// The checkpoint --checkpoint names: a file (its content digest), else a digest or its first digits in lowercase.
// Throws lt::Error for anything else.
std::string checkpoint_digest(const std::string& value) {
  if (std::filesystem::is_regular_file(value)) return lt::content_digest(value);
  std::string d = value;
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (d.empty() || d.size() > 32 || d.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw lt::Error("'" + value + "' is neither a checkpoint file nor a content digest (or its first digits)");
  return d;
}

const bool registered = lt::cli::add_command(
    {43, [](CLI::App& app) {
       {
         auto* c = app.add_subcommand("history",
                                      "Jobs over time, a row per job and GPU kind, with each job's best verified run "
                                      "of those it measured itself");
         struct Args : lt::cli::Remote, lt::cli::Output {
           std::string checkpoint, gpu;
         };
         auto a = std::make_shared<Args>();
         c->add_option("--checkpoint", a->checkpoint,
                       "Only jobs on this checkpoint: a file, its content digest or the digest's first digits")
             ->transform(lt::cli::accepted_by([](std::string& v) { v = checkpoint_digest(v); }));
         c->add_option("--gpu", a->gpu, "Only this GPU kind")->transform(lt::cli::gpu_kind());
         a->Remote::add(c);
         a->Output::add(c);
         c->callback([a] {
           const auto rows = a->client().history(a->checkpoint, a->gpu);
           if (rows.empty() && a->format == lt::cli::Format::Table) {
             std::printf("no jobs%s\n", a->checkpoint.empty() && a->gpu.empty() ? "" : " match");
             return;
           }
           a->print(lt::cli::history_table(rows));
         });
       }
       {
         auto* c = app.add_subcommand(
             "compare",
             "A job against an earlier one: the best configurations and those both measured, side by side with "
             "speed-ups (nightly, reused and replayed runs left out)");
         struct Args : lt::cli::Remote, lt::cli::Output {
           int64_t job = 0, against = 0;
           std::string gpu;
         };
         auto a = std::make_shared<Args>();
         c->add_option("job", a->job, "The job")->required();
         c->add_option("--against", a->against,
                       "The earlier job (default: the latest job before JOB on its checkpoint and GPU kind)");
         c->add_option("--gpu", a->gpu, "Only this GPU kind")->transform(lt::cli::gpu_kind());
         a->Remote::add(c);
         a->Output::add(c);
         c->callback([a] { a->print(lt::cli::compare_table(a->client().compare(a->job, a->against, a->gpu))); });
       }
     }});

}  // namespace
