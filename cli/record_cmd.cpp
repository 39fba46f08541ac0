// `lane-tune record`: writes a recording for the replay runner, from a job in the database or synthesized.
#include <cstdio>
#include <fstream>

#include <xxhash.h>

#include "command.hpp"
#include "coordinator/client.hpp"
#include "coordinator/space.hpp"
#include "db/store.hpp"

namespace {

// A made-up but deterministic measurement of a configuration: its time from the hash of its key, one in eleven a
// race, one in thirteen too big for the device.
nlohmann::json synthetic_run(const std::string& gpu, const nlohmann::json& knobs, const std::string& key) {
  uint64_t h = XXH64(key.data(), key.size(), 7);
  double ms = 0.5 + double(h % 1000) / 400.0;
  nlohmann::json r = {
      {"gpu", gpu},
      {"knobs", knobs},
      {"stage", 0},
      {"repetitions", 10},
      {"median_ms", ms},
      {"spread_ms", ms * 0.01},
      {"min_ms", ms * 0.98},
      {"max_ms", ms * 1.05},
      {"prefill_ms", ms * 3},
      {"tok_per_s", 1000 / ms},
      {"compile_s", 2.0},
      {"profile", {{"total_us", ms * 1000}}},
      {"logits_hash", "0000000000000000"},
      {"rel_l2", 1e-6},
      {"argmax_agree", 1.0},
      {"tokens_equal", true},
      {"stagger_equal", true},
      {"valid", true},
      {"reason", ""},
      {"failure", ""},
      {"error", ""},
      {"worker", "synthetic"},
      {"environment",
       {{"gpu", "Synthetic " + gpu}, {"driver", "0"}, {"cuda", "0"}, {"nvcc", "none"}, {"lane_tune", "synthetic"}}}};
  if (h % 11 == 0) {
    r["valid"] = false;
    r["stagger_equal"] = false;
    r["failure"] = "race";
    r["reason"] = "the logits differ under --stagger 1 (a race)";
  } else if (h % 13 == 0) {
    r["valid"] = false;
    r["failure"] = "does_not_fit";
    r["reason"] = "the lane does not fit the device";
  }
  return r;
}

const bool registered = lt::cli::add_command(
    {44, [](CLI::App& app) {
       auto* c = app.add_subcommand("record",
                                    "Write a recording for `lane-tune worker --replay`: a job's results from "
                                    "the database, or synthetic ones for a checkpoint's knob space");
       struct Args {
         std::string db, synthetic, gpu = "h200", out = "-";
         int64_t job = 0;
       };
       auto a = std::make_shared<Args>();
       c->add_option("--db", a->db, "The coordinator's database");
       c->add_option("--job", a->job, "The job to record (with --db)");
       c->add_option("--synthetic", a->synthetic, "A checkpoint: record made-up results for its whole knob space");
       c->add_option("--gpu", a->gpu, "The GPU kind of the synthetic recording")->capture_default_str();
       c->add_option("-o,--output", a->out, "The recording to write (- : stdout)")->capture_default_str();
       c->callback([a] {
         nlohmann::json rec;
         if (!a->synthetic.empty()) {
           auto* kind = lt::coord::find_gpu_kind(a->gpu);
           if (!kind) throw lt::Error("unknown GPU kind '" + a->gpu + "'");
           auto space = lt::coord::compiler()->space(a->synthetic, *kind);
           nlohmann::json runs = nlohmann::json::array();
           for (auto& k : space->enumerate()) runs.push_back(synthetic_run(a->gpu, k, space->key(k)));
           rec = {{"format", "lane-tune-results"}, {"version", 1}, {"job", 0}, {"synthetic", true}, {"runs", runs}};
         } else {
           if (a->db.empty() || a->job == 0)
             throw lt::Error("record needs --db FILE --job N, or --synthetic CHECKPOINT");
           if (!std::filesystem::exists(a->db)) throw lt::Error("no database " + a->db);
           lt::db::Store store(a->db);
           if (!store.job(a->job)) throw lt::Error("no job " + std::to_string(a->job) + " in " + a->db);
           rec = lt::coord::results_json(a->job, store.runs(a->job));
         }
         std::string text = rec.dump(1) + "\n";
         if (a->out == "-") {
           std::fwrite(text.data(), 1, text.size(), stdout);
         } else {
           std::ofstream(a->out) << text;
           std::fprintf(stderr, "wrote %s: %zu runs\n", a->out.c_str(), rec["runs"].size());
         }
       });
     }});
}  // namespace
