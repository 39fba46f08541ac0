// `lane-tune report JOB -o FILE`: one self-contained HTML page of a job's plots, from what the coordinator serves.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "command.hpp"
#include "compiler/error.hpp"
#include "coordinator/release_client.hpp"
#include "options.hpp"
#include "report/report.hpp"

namespace {

namespace fs = std::filesystem;

// Writes `text` to `path` through a temporary file beside it, renamed when complete: a failed write leaves no page.
void write_page(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw lt::Error("cannot write " + tmp.string());
    }
  }
  fs::rename(tmp, path);
}

const bool registered = lt::cli::add_command(
    {43, [](CLI::App& app) {
       auto* c = app.add_subcommand("report",
                                    "Write one self-contained HTML page of a job's plots: configurations, the "
                                    "search's progress, the best configuration's profile, nightly runs");
       struct Args : lt::cli::Remote {
         int64_t job = 0;
         std::string out;
       };
       auto a = std::make_shared<Args>();
       c->add_option("job", a->job, "The job")->required();
       c->add_option("-o,--output", a->out, "The page to write (default: lane-tune-report-JOB.html)");
       a->Remote::add(c);
       c->footer("The page opens offline: Chart.js (MIT, from Debian's libjs-chart.js) and the data are inlined.");
       c->callback([a] {
         lt::cli::require_report();  // before any call
         const fs::path out = a->out.empty() ? "lane-tune-report-" + std::to_string(a->job) + ".html" : a->out;
         auto client = a->client(120);
         lt::cli::ReportInput in;
         in.status = client.status(a->job);
         in.runs = client.results(a->job, "", 0);
         in.winners = client.best(a->job, "");
         in.nights = lt::coord::ReleaseClient(a->coordinator, a->token, 60, a->tls_ca).nights(a->job);
         const auto data = lt::cli::report_data(in);
         write_page(out, lt::cli::report_page(data));
         std::printf("report of job %lld: %zu runs, %zu charts, written to %s\n", static_cast<long long>(a->job),
                     in.runs.size(), data["charts"].size(), out.c_str());
       });
     }});

}  // namespace
