// `lane-tune worker`: measures plans on one GPU (or answers them from a recording) for a coordinator.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/log.hpp"
#include "compiler/version.hpp"
#include "options.hpp"
#include "worker/runner.hpp"
#include "worker/worker.hpp"

namespace {
std::string env_or(const char* name, const char* fallback) {
  const char* e = std::getenv(name);
  return e && *e ? e : fallback;
}

const bool registered = lt::cli::add_command(
    {43, [](CLI::App& app) {
       auto* c =
           app.add_subcommand("worker", "Measure plans for a coordinator on one GPU (or from a recording: --replay)");
       struct Args {
         std::string coordinator = env_or("LT_COORDINATOR", "127.0.0.1:7117"), token = env_or("LT_TOKEN", ""),
                     tls_ca = env_or("LT_TLS_CA", ""), replay, kind, name, cache, log_format = "logfmt";
         int gpu = 0, verbose = 0;
         double replay_delay_ms = 0, give_up_s = 0;
         uint32_t prefetch = 8;
       };
       auto a = std::make_shared<Args>();
       c->add_option("--coordinator", a->coordinator, "host:port (default $LT_COORDINATOR or 127.0.0.1:7117)");
       c->add_option("--token", a->token, "The coordinator's token (default $LT_TOKEN)");
       c->add_option("--tls-ca", a->tls_ca, "Check a TLS coordinator against this CA certificate (default $LT_TLS_CA)");
       c->add_option("--gpu", a->gpu, "The GPU's index (nvidia-smi's)")->capture_default_str();
       c->add_option("--replay", a->replay, "Answer plans from a recording (`lane-tune results JOB --json`), no GPU");
       c->add_option("--replay-delay", a->replay_delay_ms, "Milliseconds each replayed plan takes");
       c->add_option("--kind", a->kind, "The GPU kind to register as (default: detected, or the recording's)")
           ->transform(lt::cli::gpu_kind());
       c->add_option("--name", a->name, "The worker's name (default host:gpu)");
       c->add_option("--cache", a->cache, "Checkpoints and compiled lanes (default ~/.cache/lane-tune)");
       c->add_option("--prefetch", a->prefetch, "Plans held at once: one measured, the rest compiled ahead")
           ->capture_default_str();
       c->add_option("--give-up", a->give_up_s, "Exit after this many seconds without reaching the coordinator");
       c->add_flag("-v,--verbose", a->verbose, "Log every plan (-vv: more)");
       c->add_option("--log-format", a->log_format, "Log lines as logfmt or json")
           ->check(CLI::IsMember({"logfmt", "json"}))
           ->capture_default_str();
       c->callback([a] {
         lt::worker::log_level() = a->verbose;
         lt::logging::format() = lt::logging::parse_format(a->log_format);
         sigset_t set;
         sigemptyset(&set);
         sigaddset(&set, SIGINT);
         sigaddset(&set, SIGTERM);
         sigaddset(&set, SIGUSR2);  // wakes the signal thread when the worker ends by itself
         pthread_sigmask(SIG_BLOCK, &set, nullptr);

         lt::worker::Options o;
         o.cache_dir = a->cache.empty() ? std::filesystem::path(env_or("HOME", "/tmp")) / ".cache" / "lane-tune"
                                        : std::filesystem::path(a->cache);
         o.prefetch = std::max(1u, a->prefetch);
         o.stalled_extra = o.prefetch;  // while all of them build, as many again, one a second
         o.give_up_s = a->give_up_s;
         std::unique_ptr<lt::worker::Runner> runner;
         if (!a->replay.empty()) {
           o.gpu = lt::worker::recorded_gpu(a->replay);
           runner = lt::worker::replay_runner(a->replay, a->replay_delay_ms);
         } else {
           o.gpu = lt::worker::detect_gpu(a->gpu);
           std::string nvcc = lt::nvcc_path();
           if (nvcc.empty() || !std::filesystem::exists(nvcc))
             throw lt::Error("no nvcc here: a GPU worker builds lanes; install the CUDA toolkit or set $LT_NVCC");
           // The lanes run on this worker's GPU and no other.
           if (!o.gpu.uuid.empty()) setenv("CUDA_VISIBLE_DEVICES", o.gpu.uuid.c_str(), 1);
           runner = lt::worker::cuda_runner({o.gpu, o.cache_dir / "lanes"});
         }
         if (!a->kind.empty()) o.gpu.kind = a->kind;
         char host[256] = "host";
         gethostname(host, sizeof host - 1);
         o.name = a->name.empty() ? std::string(host) + ":" + std::to_string(a->gpu) : a->name;
         lt::worker::Worker w(o, lt::worker::grpc_link(a->coordinator, a->token, a->tls_ca), std::move(runner));
         std::thread signals([&] {
           int sig = 0;
           sigwait(&set, &sig);
           if (sig == SIGTERM || sig == SIGINT) lt::worker::log(0, "stopping", {{"signal", std::to_string(sig)}});
           w.stop();
         });
         try {
           w.run();
         } catch (...) {
           pthread_kill(signals.native_handle(), SIGUSR2);
           signals.detach();
           throw;
         }
         pthread_kill(signals.native_handle(), SIGUSR2);
         signals.join();
       });
     }});
}  // namespace
