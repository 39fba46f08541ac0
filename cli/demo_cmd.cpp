// `lane-tune demo`: the main job on an embedded default. It synthesizes a small checkpoint, starts a local
// coordinator on a SQLite file and one local worker (on this machine's GPU, or answering from the H200 recording
// where there is none), tunes the checkpoint with successive halving, and prints the results and the best
// configuration.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "command.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "worker/gpu.hpp"

namespace {

namespace fs = std::filesystem;

// This binary, to start the coordinator, the worker and the clients as the user would.
std::string self() {
  return fs::read_symlink("/proc/self/exe").string();
}

// Starts `args` as a child whose output goes to `log` (or to ours when empty); returns its pid.
pid_t spawn(const std::vector<std::string>& args, const fs::path& log) {
  pid_t pid = fork();
  if (pid < 0) throw lt::Error("cannot fork");
  if (pid == 0) {
    if (!log.empty()) {
      FILE* f = std::fopen(log.c_str(), "a");
      if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
    }
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Runs `args` in the foreground (its output ours) and returns its exit status.
int run(const std::vector<std::string>& args) {
  int st = 0;
  waitpid(spawn(args, {}), &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

// Stops a child politely, then firmly.
void stop(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// The H200 recording of a real tuning job of the demo's checkpoint when the source tree has it, else none (the demo
// then writes a synthetic one and says so).
std::string default_recording() {
  const fs::path real = fs::path(LT_FIXTURES) / "h200-tiny-qwen3.json";
  return fs::exists(real) ? real.string() : std::string();
}

struct Demo {
  std::string dir = "lane-tune-demo";
  std::string preset = "tiny-qwen3";
  uint64_t seed = 1;
  std::string replay = default_recording();
  std::string strategy = "halving";
  int budget = 12;  // as bench/h200_service.sh records the fixture
  // The fixture measured decode (its prefill is the check prompts', not a workload's): halving ranks as it did.
  std::string objective = "decode";
  bool force_replay = false;
};

// The knobs that vary in the checkpoint's space (on an h200) but that no run of the recording names, comma-separated;
// empty when the recording knows them all (or holds no runs: a synthetic one answers every point).
std::string knobs_not_recorded(const std::string& recording, const fs::path& checkpoint) {
  std::ifstream f(recording);
  const nlohmann::json rec = nlohmann::json::parse(f, nullptr, false);
  if (rec.is_discarded() || !rec.is_object() || !rec.contains("runs") || !rec["runs"].is_array() ||
      rec["runs"].empty())
    return "";
  std::set<std::string> named;
  for (const auto& r : rec["runs"]) {
    if (!r.is_object() || !r.contains("knobs")) continue;
    const auto& k = r["knobs"];
    const nlohmann::json j = k.is_string() ? nlohmann::json::parse(k.get<std::string>(), nullptr, false) : k;
    if (j.is_object())
      for (auto& [name, v] : j.items()) named.insert(name);
  }
  const auto file = lt::gguf::File::open(checkpoint);
  std::string missing;
  for (const auto& d : lt::knobs::space(lt::model::recognize(file), {132, 90}).domains)
    if (d.values.size() > 1 && !named.count(d.name)) missing += (missing.empty() ? "" : ", ") + d.name;
  return missing;
}

void run_demo(const Demo& d) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // our lines in order with the children's
  const fs::path dir = fs::absolute(d.dir);
  fs::create_directories(dir);
  const fs::path ckpt = dir / (d.preset + ".gguf");
  lt::synth::Options o;
  o.preset = d.preset;
  o.seed = d.seed;
  lt::synth::write(o, ckpt);
  std::printf("demo: synthesized %s (%s, seed %llu)\n", ckpt.c_str(), d.preset.c_str(),
              static_cast<unsigned long long>(d.seed));

  // The worker: this machine's GPU, or the recording.
  std::vector<std::string> worker = {self(), "worker", "--give-up", "60"};
  std::string kind;
  if (!d.force_replay) {
    try {
      kind = lt::worker::detect_gpu(0).kind;
    } catch (const lt::Error&) {
    }
  }
  if (kind.empty()) {
    std::string replay = d.replay;
    if (!replay.empty() && fs::exists(replay)) {
      // A recording answers only the configurations it measured: one made before a knob that now varies holds none of
      // that knob's other values, and the job's draws would find it empty. The synthetic recording answers then.
      const std::string missing = knobs_not_recorded(replay, ckpt);
      if (!missing.empty()) {
        std::printf("demo: the recording %s predates the knobs %s\n", replay.c_str(), missing.c_str());
        replay.clear();
      }
    }
    if (replay.empty()) {
      replay = (dir / "synthetic-recording.json").string();
      if (run({self(), "record", "--synthetic", ckpt.string(), "--gpu", "h200", "-o", replay}) != 0)
        throw lt::Error("cannot write a synthetic recording");
      std::printf(
          "demo: no GPU and no recording of a real job here: the worker answers from a SYNTHETIC recording "
          "(made-up figures, not measurements)\n");
    } else if (!fs::exists(replay)) {
      throw lt::Error("no GPU here and no recording at " + replay + " (give --replay FILE)");
    }
    // The GPU kind the recording answers for: a synthetic recording names it (it holds no runs), a real one's runs do.
    std::ifstream f(replay);
    const nlohmann::json rec = nlohmann::json::parse(f, nullptr, false);
    if (rec.is_discarded() || !rec.is_object()) throw lt::Error(replay + " is not a recording (lane-tune record)");
    if (rec.contains("gpu") && rec["gpu"].is_string()) kind = rec["gpu"].get<std::string>();
    if (kind.empty() && rec.contains("runs") && rec["runs"].is_array() && !rec["runs"].empty() &&
        rec["runs"][0].is_object() && rec["runs"][0].contains("gpu") && rec["runs"][0]["gpu"].is_string())
      kind = rec["runs"][0]["gpu"].get<std::string>();
    if (kind.empty()) throw lt::Error(replay + " names no GPU kind and records no runs");
    worker.insert(worker.end(), {"--replay", replay, "--replay-delay", "50"});
    std::printf("demo: no GPU here: the worker answers from the %s recording %s\n", kind.c_str(), replay.c_str());
  } else {
    std::printf("demo: the worker measures on this machine's %s\n", kind.c_str());
  }

  const fs::path port_file = dir / "coordinator.port", db = dir / "lane-tune.db";
  fs::remove(port_file);
  pid_t coord =
      spawn({self(), "coordinator", "--db", db.string(), "--listen", "127.0.0.1:0", "--port-file", port_file.string()},
            dir / "coordinator.log");
  pid_t work = -1;
  try {
    std::string port;
    for (int i = 0; i < 300 && port.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::ifstream(port_file) >> port;
    }
    if (port.empty()) throw lt::Error("the coordinator did not start (see " + (dir / "coordinator.log").string() + ")");
    const std::string addr = "127.0.0.1:" + port;
    std::printf("demo: coordinator on %s, database %s\n", addr.c_str(), db.c_str());
    worker.insert(worker.end(), {"--coordinator", addr, "--cache", (dir / "cache").string()});
    work = spawn(worker, dir / "worker.log");
    if (run({self(), "submit", ckpt.string(), "--gpus", kind, "--strategy", d.strategy, "--budget",
             std::to_string(d.budget), "--objective", d.objective, "--wait", "--coordinator", addr}) != 0)
      throw lt::Error("the job did not finish (see " + dir.string() + "/*.log)");
    run({self(), "results", "1", "--top", "8", "--coordinator", addr});
    run({self(), "best", "1", "--coordinator", addr});
    std::printf("demo: the evidence is plain SQL: sqlite3 %s 'select * from best_configs'\n", db.c_str());
  } catch (...) {
    stop(work);
    stop(coord);
    throw;
  }
  stop(work);
  stop(coord);
}

const bool registered = lt::cli::add_command(
    {5, [](CLI::App& app) {
       auto* c = app.add_subcommand("demo",
                                    "The main job on an embedded default: a synthesized checkpoint tuned by a local "
                                    "coordinator and worker into a SQLite file");
       auto d = std::make_shared<Demo>();
       c->add_option("--dir", d->dir, "Where the checkpoint, the database and the logs go")->capture_default_str();
       c->add_option("--preset", d->preset, "The checkpoint to synthesize")->capture_default_str();
       c->add_option("--strategy", d->strategy, "model, grid, random or halving")->capture_default_str();
       c->add_option("--objective", d->objective, "workload, decode or prefill")->capture_default_str();
       c->add_option("--budget", d->budget, "Configurations to try")->capture_default_str();
       c->add_option("--replay", d->replay, "The recording a worker without a GPU answers from")->capture_default_str();
       c->add_flag("--replay-only", d->force_replay, "Answer from the recording even where there is a GPU");
       c->callback([d] { run_demo(*d); });
     }});

}  // namespace
