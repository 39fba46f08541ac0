// `lane-tune record`: writes a recording for the replay runner, from a job's results as the coordinator answers them
// (only the coordinator touches its database), or synthesized.
#include <cstdio>
#include <fstream>

#include "command.hpp"
#include "coordinator/client.hpp"
#include "coordinator/space.hpp"
#include "options.hpp"

namespace {

const bool registered = lt::cli::add_command(
    {44, [](CLI::App& app) {
       auto* c = app.add_subcommand("record",
                                    "Write a recording for `lane-tune worker --replay`: a job's results from "
                                    "the coordinator, or synthetic ones for a checkpoint's knob space");
       struct Args {
         std::string db, synthetic, gpu = "h200", out = "-", landscape = "hash";
         std::string coordinator = lt::coord::default_coordinator(), token = lt::coord::default_token(),
                     tls_ca = lt::coord::default_tls_ca();
         int64_t job = 0;
       };
       auto a = std::make_shared<Args>();
       c->add_option("--job", a->job, "The job to record, read from the coordinator");
       c->add_option("--coordinator", a->coordinator, "host:port (default $LT_COORDINATOR or 127.0.0.1:7117)");
       c->add_option("--token", a->token, "The coordinator's token (default $LT_TOKEN)");
       c->add_option("--tls-ca", a->tls_ca, "Check a TLS coordinator against this CA certificate (default $LT_TLS_CA)");
       // (Hidden: only the coordinator reads its database; --db says how to record from one.)
       c->add_option("--db", a->db, "")->group("");
       c->add_option("--synthetic", a->synthetic, "A checkpoint: record made-up results for its whole knob space");
       c->add_option("--gpu", a->gpu, "The GPU kind of the synthetic recording")
           ->capture_default_str()
           ->transform(lt::cli::gpu_kind());
       c->add_option("--landscape", a->landscape,
                     "The synthetic recording's made-up figures: hash (a time from each point's key) or lane (a "
                     "structured lane: launches, profiles, a decode/prefill trade-off)")
           ->check(CLI::IsMember({"hash", "lane"}))
           ->capture_default_str();
       c->add_option("-o,--output", a->out, "The recording to write (- : stdout)")->capture_default_str();
       c->callback([a] {
         nlohmann::json rec;
         if (!a->synthetic.empty()) {
           // Made-up results for every point of the space, computed by the replay runner from each point's key
           // (a space has hundreds of thousands of points); the checkpoint is checked to have a space on the kind.
           auto* kind = lt::coord::find_gpu_kind(a->gpu);  // (canonical: the option's check made it so)
           const size_t points = lt::coord::compiler()->space(a->synthetic, *kind, 0)->size();
           rec = {{"format", "lane-tune-results"},
                  {"version", 1},
                  {"job", 0},
                  {"synthetic", true},
                  {"gpu", a->gpu},
                  {"points", points},
                  {"landscape", a->landscape},
                  {"runs", nlohmann::json::array()}};
         } else {
           if (!a->db.empty())
             throw CLI::ValidationError("--db", "record reads a job through the coordinator, not from " + a->db +
                                                    ": start `lane-tune coordinator --db " + a->db +
                                                    "` and give --coordinator");
           if (a->job == 0)
             throw CLI::ValidationError("--job",
                                        "record needs --job N (from the coordinator), or --synthetic CHECKPOINT");
           lt::coord::Client client(a->coordinator, a->token, 30, a->tls_ca);
           rec = lt::coord::results_json(a->job, client.results(a->job, "", 0));
         }
         std::string text = rec.dump(1) + "\n";
         if (a->out == "-") {
           std::fwrite(text.data(), 1, text.size(), stdout);
         } else {
           std::ofstream(a->out) << text;
           if (rec.value("synthetic", false))
             std::fprintf(stderr, "wrote %s: synthetic results for %zu points\n", a->out.c_str(),
                          rec["points"].get<size_t>());
           else
             std::fprintf(stderr, "wrote %s: %zu runs\n", a->out.c_str(), rec["runs"].size());
         }
       });
     }});
}  // namespace
