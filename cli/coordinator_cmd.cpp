// `lane-tune coordinator`: serves the tuning service over gRPC with all state in a SQLite file.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <thread>

#include "command.hpp"
#include "compiler/log.hpp"
#include "coordinator/client.hpp"
#include "coordinator/core.hpp"
#include "coordinator/log.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/server.hpp"
#include "coordinator/systemd.hpp"

namespace {
const bool registered = lt::cli::add_command(
    {40, [](CLI::App& app) {
       auto* c = app.add_subcommand("coordinator", "Serve tuning jobs to clients and plans to GPU workers");
       struct Args {
         std::string db = "lane-tune.db", listen = "127.0.0.1:7117", token, token_file, data, port_file, tls_cert,
                     tls_key, metrics_listen;
         double lease_s = 30, time_limit_s = 600, max_upload_gib = 1024;
         uint32_t max_jobs = 64;
         int max_watches = 64, max_watches_per_client = 16;
         int verbose = 0;
         std::string log_format = "logfmt";
         lt::coord::Options measure;  // warm-up, repetitions, stagger seeds
         std::vector<std::string> allow_path;
       };
       auto a = std::make_shared<Args>();
       c->add_option("--db", a->db, "The SQLite database (created when missing)")->capture_default_str();
       c->add_option("--listen", a->listen,
                     "host:port to listen on (port 0: any free port; beyond loopback only with a token)")
           ->capture_default_str();
       auto* token = c->add_option("--token", a->token,
                                   "A token every client and worker must present (default $LT_TOKEN; --token-file "
                                   "keeps it out of the process list)");
       c->add_option("--token-file", a->token_file, "Read the token from this file (its first line)")
           ->check(CLI::ExistingFile)
           ->excludes(token);
       c->add_option("--data", a->data, "Where uploaded checkpoints are kept (default: beside the database)");
       c->add_option("--lease", a->lease_s, "Seconds a lease lasts without a heartbeat")
           ->check(CLI::Range(1.0, 3600.0))
           ->capture_default_str();
       c->add_option("--time-limit", a->time_limit_s, "Seconds a lane may run before it is killed")
           ->check(CLI::Range(1.0, 86400.0))
           ->capture_default_str();
       c->add_option("--warmup", a->measure.warmup, "Untimed runs before a configuration's repetitions")
           ->check(CLI::Range(0, 100))
           ->capture_default_str();
       c->add_option("--repetitions", a->measure.search.repetitions, "Timed runs per configuration (grid, random)")
           ->check(CLI::Range(1, 1000))
           ->capture_default_str();
       c->add_option("--halving-repetitions", a->measure.search.halving_repetitions,
                     "Timed runs in successive halving's first round (times 3 each later round)")
           ->check(CLI::Range(1, 1000))
           ->capture_default_str();
       c->add_option("--screen-repetitions", a->measure.search.screen_repetitions,
                     "Timed runs of a configuration the model strategy screens (no --stagger)")
           ->check(CLI::Range(1, 1000))
           ->capture_default_str();
       c->add_option("--verify-repetitions", a->measure.search.verify_repetitions,
                     "Timed runs of a configuration the model strategy verifies (the full checks)")
           ->check(CLI::Range(1, 1000))
           ->capture_default_str();
       c->add_option("--cutoff", a->measure.cutoff_factor,
                     "A screen stops after its first run when past this many times the job's best (0: never)")
           ->check(CLI::Number & (CLI::Range(1.01, 100.0) | CLI::IsMember({0.0})))
           ->capture_default_str();
       c->add_flag("!--no-warm-start", a->measure.warm_start,
                   "Do not start the model strategy from other jobs' verified configurations");
       c->add_option("--stagger-seeds", a->measure.stagger_seeds, "The --stagger seeds every configuration runs with")
           ->delimiter(',')
           ->capture_default_str();
       c->add_option("--allow-path", a->allow_path,
                     "Let jobs name checkpoints by path under this folder (repeat for more; none: uploads only)")
           ->check(CLI::ExistingDirectory);
       c->add_option("--max-upload-gib", a->max_upload_gib, "An uploaded checkpoint's size at most, GiB")
           ->check(CLI::Range(0.001, 65536.0))
           ->capture_default_str();
       c->add_option("--max-jobs", a->max_jobs,
                     "Jobs running at once at most; a submit past it is refused (0: no limit)")
           ->check(CLI::Range(0u, 1000000u))
           ->capture_default_str();
       c->add_option("--max-watches", a->max_watches, "Watch streams open at once at most (each holds a thread)")
           ->check(CLI::Range(1, 10000))
           ->capture_default_str();
       c->add_option("--max-watches-per-client", a->max_watches_per_client,
                     "Watch streams open at once from one client host at most")
           ->check(CLI::Range(1, 10000))
           ->capture_default_str();
       c->add_option("--tls-cert", a->tls_cert, "Serve TLS with this certificate (PEM; with --tls-key)");
       c->add_option("--tls-key", a->tls_key, "The TLS certificate's private key (PEM)");
       c->add_option("--metrics-listen", a->metrics_listen,
                     "host:port to serve Prometheus metrics on at /metrics, no token (default: none; "
                     "127.0.0.1:9117 keeps them on this machine)");
       c->add_option("--port-file", a->port_file, "Write the port listened on to this file once serving");
       c->add_flag("-v,--verbose", a->verbose, "Log every request that changes state (-vv: every request)");
       c->add_option("--log-format", a->log_format, "Log lines as logfmt or json")
           ->check(CLI::IsMember({"logfmt", "json"}))
           ->capture_default_str();
       c->callback([a] {
         lt::coord::log_level() = a->verbose;
         lt::logging::format() = lt::logging::parse_format(a->log_format);
         if (!a->token_file.empty()) {
           std::ifstream in(a->token_file);
           std::getline(in, a->token);
           while (!a->token.empty() && (a->token.back() == '\r' || a->token.back() == ' ')) a->token.pop_back();
           if (a->token.empty()) throw lt::Error("the token file " + a->token_file + " is empty");
         }
         if (a->token.empty()) a->token = lt::coord::default_token();
         // Signals are taken by a thread of their own so that shutdown runs outside a handler.
         sigset_t set;
         sigemptyset(&set);
         sigaddset(&set, SIGINT);
         sigaddset(&set, SIGTERM);
         pthread_sigmask(SIG_BLOCK, &set, nullptr);
         lt::coord::Options o = a->measure;
         o.data_dir = a->data;
         o.lease_s = a->lease_s;
         for (auto& d : a->allow_path) o.path_roots.push_back(std::filesystem::absolute(d));
         o.max_upload_bytes = uint64_t(a->max_upload_gib * double(uint64_t(1) << 30));
         o.max_running_jobs = a->max_jobs;
         o.time_limit_s = a->time_limit_s;
         auto db = std::filesystem::absolute(a->db);
         if (o.data_dir.empty()) o.data_dir = db.parent_path() / (db.filename().string() + ".data");
         lt::coord::Coordinator core(db, o, lt::coord::compiler());
         lt::coord::ServerOptions so{a->listen, a->token, a->tls_cert, a->tls_key, 1.0};
         so.max_watches = a->max_watches;
         so.max_watches_per_client = a->max_watches_per_client;
         lt::coord::Server server(core, so);
         std::unique_ptr<lt::coord::MetricsServer> metrics;
         std::string metrics_at = "off";
         if (!a->metrics_listen.empty()) {
           metrics = std::make_unique<lt::coord::MetricsServer>(core, a->metrics_listen);
           metrics_at = lt::coord::parse_listen(a->metrics_listen).host + ":" + std::to_string(metrics->port());
         }
         std::string host = a->listen.substr(0, a->listen.rfind(':'));
         lt::coord::log(0, "listening",
                        {{"address", host + ":" + std::to_string(server.port())},
                         {"db", db.string()},
                         {"auth", a->token.empty() ? "none" : "token"},
                         {"tls", a->tls_cert.empty() ? "off" : "on"},
                         {"metrics", metrics_at}});
         if (!a->port_file.empty()) {
           auto tmp = a->port_file + ".tmp";
           std::ofstream(tmp) << server.port() << "\n";
           std::filesystem::rename(tmp, a->port_file);
         }
         // Ready once every port listens and the port file is written (systemd's Type=notify waits for this).
         lt::coord::notify_ready("serving on " + host + ":" + std::to_string(server.port()));
         std::thread signals([&] {
           int sig = 0;
           sigwait(&set, &sig);
           lt::coord::log(0, "stopping", {{"signal", std::to_string(sig)}});
           lt::coord::notify_stopping();
           server.shutdown();
         });
         server.wait();
         pthread_kill(signals.native_handle(), SIGTERM);
         signals.join();
       });
     }});
}  // namespace
