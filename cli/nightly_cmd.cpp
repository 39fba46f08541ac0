// `lane-tune nightly`: re-measures every release (or those named) on workers of its GPU kind through the coordinator,
// judges each against its baseline, prints the night's table and fails on a regression or a wrong result.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>
#include <thread>

#include "command.hpp"
#include "coordinator/client.hpp"
#include "coordinator/release_client.hpp"
#include "options.hpp"
#include "output/views.hpp"

namespace {

// The command's arguments.
struct Args : lt::cli::Remote, lt::cli::Output {
  std::string gpus, releases, timeout = "2h";
  lt::coord::VerdictRule rule;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> v;
  std::stringstream in(text);
  for (std::string s; std::getline(in, s, ',');)
    if (!s.empty()) v.push_back(s);
  return v;
}

nlohmann::json night_json(const lt::coord::Night& n, bool ok) {
  nlohmann::json rows = nlohmann::json::array();
  for (auto& r : n.rows)
    rows.push_back({{"release", r.release},
                    {"gpu", r.gpu},
                    {"job", r.job},
                    {"baseline_ms", r.baseline_ms},
                    {"baseline_spread_ms", r.baseline_spread_ms},
                    {"median_ms", r.median_ms},
                    {"spread_ms", r.spread_ms},
                    {"repetitions", r.repetitions},
                    {"change_pct", r.change_pct},
                    {"verdict", r.verdict},
                    {"reason", r.reason},
                    {"logits_hash", r.logits_hash}});
  return {{"night", n.night}, {"ok", ok}, {"rows", rows}};
}

// Waits for the night's jobs; those still running after `timeout_s` are cancelled (judged `failed`).
void wait_for_jobs(lt::coord::Client& client, const lt::coord::Night& n, double timeout_s) {
  std::set<int64_t> open;
  for (auto& r : n.rows) open.insert(r.job);
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!open.empty()) {
    for (auto it = open.begin(); it != open.end();) {
      try {
        if (client.status(*it).job.state != "running") {
          it = open.erase(it);
          continue;
        }
      } catch (const lt::coord::CallError& e) {
        if (e.code() != "UNAVAILABLE") throw;  // a restarting coordinator: ask again
      }
      ++it;
    }
    if (open.empty()) break;
    if (std::chrono::steady_clock::now() > end) {
      for (auto job : open) {
        std::fprintf(stderr, "job %lld did not finish in time (no worker of its kind?): cancelled\n",
                     static_cast<long long>(job));
        client.cancel(job);
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

void nightly(const Args& a) {
  double timeout_s = lt::coord::parse_duration(a.timeout);
  std::vector<int64_t> ids;
  for (auto& s : split(a.releases)) {
    try {
      ids.push_back(std::stoll(s));
    } catch (const std::exception&) {
      throw lt::Error("--releases takes release numbers, comma-separated: '" + s + "'");
    }
  }
  lt::coord::ReleaseClient releases(a.coordinator, a.token, 60, a.tls_ca);
  lt::coord::Client client(a.coordinator, a.token, 30, a.tls_ca);
  // Nothing recorded yet (for these kinds) is a quiet night, not a failure: a timer set up before the first export
  // stays green.
  if (ids.empty()) {
    const auto kinds = split(a.gpus);
    bool any = false;
    for (auto& r : releases.list()) any |= kinds.empty() || std::find(kinds.begin(), kinds.end(), r.gpu) != kinds.end();
    if (!any) {
      std::printf("no releases to re-run%s (export one with `lane-tune export JOB --gpu KIND -o DIR`)\n",
                  kinds.empty() ? "" : (" for " + a.gpus).c_str());
      return;
    }
  }
  auto night = releases.start_night(ids, split(a.gpus));
  std::fprintf(stderr, "night %lld: %zu release runs\n", static_cast<long long>(night.night), night.rows.size());
  wait_for_jobs(client, night, timeout_s);
  auto judged = releases.judge_night(night.night, a.rule);
  bool ok = true;
  for (auto& r : judged.rows) ok &= r.verdict != "pending" && !lt::coord::Verdict{r.verdict, 0, ""}.bad();
  if (a.format == lt::cli::Format::Json)
    std::printf("%s\n", night_json(judged, ok).dump(1).c_str());
  else
    a.print(lt::cli::night_table(judged));
  if (!ok) lt::cli::exit_status() = lt::cli::kExitRegression;
}

// `lane-tune releases`: the recorded releases with their baselines.
void list_releases(const Args& a) {
  lt::coord::ReleaseClient releases(a.coordinator, a.token, 60, a.tls_ca);
  auto all = releases.list();
  if (all.empty() && a.format == lt::cli::Format::Table) {
    std::printf("no releases (export one with `lane-tune export JOB --gpu KIND -o DIR`)\n");
    return;
  }
  a.print(lt::cli::releases_table(all));
}

const bool listed = lt::cli::add_command({46, [](CLI::App& app) {
                                            auto* c = app.add_subcommand("releases", "The recorded releases");
                                            auto a = std::make_shared<Args>();
                                            a->Remote::add(c);
                                            a->Output::add(c);
                                            c->callback([a] { list_releases(*a); });
                                          }});

const bool registered = lt::cli::add_command(
    {45, [](CLI::App& app) {
       auto* c = app.add_subcommand("nightly", "Re-measure the releases; fail on a regression or a wrong result");
       auto a = std::make_shared<Args>();
       c->add_option("--gpus", a->gpus, "Only releases for these GPU kinds, comma-separated (default: all)")
           ->transform(lt::cli::gpu_kinds());
       c->add_option("--releases", a->releases, "Only these releases, comma-separated (default: all)");
       c->add_option("--slower-pct", a->rule.slower_pct,
                     "A regression is slower by more than this percentage (and outside the noise)")
           ->capture_default_str();
       c->add_option("--noise", a->rule.noise, "The noise band in spreads (median absolute deviations) of both medians")
           ->capture_default_str();
       c->add_option("--timeout", a->timeout, "Give up on a release's run after this long (90s, 30m, 2h)")
           ->capture_default_str();
       a->Output::add(c);
       a->Remote::add(c);
       c->callback([a] { nightly(*a); });
     }});
}  // namespace
