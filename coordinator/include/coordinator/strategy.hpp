// Search strategies as objects: which configurations a job's search on one GPU kind measures next, learnt from the
// results of what it measured before (TVM's SearchStrategy: generate candidates, notify results).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/objective.hpp"
#include "coordinator/space.hpp"

namespace lt::coord {

// How much each strategy measures.
struct SearchOptions {
  uint32_t repetitions = 10;         // grid, random and fixed: timed repetitions per configuration (verified)
  uint32_t halving_repetitions = 3;  // successive halving's first round; each later round multiplies it by eta
  uint32_t eta = 3;                  // successive halving keeps the best 1/eta of a round
  uint32_t max_stages = 3;
  uint32_t screen_repetitions = 1;  // model: a screened configuration's repetitions (timed, profiled, no --stagger)
  uint32_t verify_repetitions = 5;  // model: a verification's repetitions (the full checks)
  uint32_t model_budget = 256;      // model: configurations screened when the job names no budget
  uint32_t model_budget_timed = 4096;  // model: screened under a time budget with no count (the time ends it first)
  uint32_t queue = 8;               // plans kept pending or leased per search, at least
  uint32_t warm = 8;                // configurations of other jobs a search starts with, at most
};

nlohmann::json to_json(const SearchOptions& o);
SearchOptions search_options_from_json(const nlohmann::json& j);

// A configuration a strategy asks to measure, and how.
struct Proposal {
  nlohmann::json knobs;  // canonical: every knob
  std::string key;
  uint32_t stage = 0;  // halving's round; the model's 0 (screen) or 1 (verification)
  uint32_t repetitions = 1;
  bool verify = true;   // the full checks (--stagger too); false: screened by speed and the logits checks
  bool profile = true;  // every launch timed once
  std::string origin;   // grid | random | halving | prior | warm:<job> | model | explore | fixed
};

// The failure class of a plan whose stored row cannot be read (its knobs are not a JSON object, say) or that a worker
// cannot read as sent: the plan ends failed, saying why, with nothing measured.
inline constexpr const char* kBadPlan = "bad_plan";

// A finished plan as a strategy learns from it.
struct Observation {
  std::string key;
  nlohmann::json knobs;
  uint32_t stage = 0;
  bool verify = false;    // the plan asked for the full checks
  bool valid = false;     // it passed the checks it ran
  bool verified = false;  // valid under the full checks
  double objective_ms = 0, decode_ms = 0, prefill_ms = 0, workload_ms = 0;
  nlohmann::json profile = nlohmann::json::object();  // {} when not profiled
  std::string failure;
};

// A configuration a search starts with: its knobs and why (warm:<job>).
struct Seed {
  nlohmann::json knobs;
  std::string origin;
};

// What a job asks of one GPU kind's search.
struct SearchSettings {
  std::string strategy = "model";
  uint32_t budget = 0;  // grid: none; random and halving: configurations (0: every point); model: screens (0: default)
  uint64_t seed = 0;
  Objective objective = Objective::Workload;
  SearchOptions options;
  std::vector<Seed> warm;  // model: configurations of other jobs to screen first
};

// A search strategy: proposes candidates, takes the results of finished plans, and saves its state.
//
// Its saved state never holds observations: after a restore, every finished plan of the search is taken again, in
// the order the results were recorded, so a restored strategy proposes what the live one would have.
class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // Up to `n` candidates to measure next, `open` of the search's plans still pending or leased; fewer or none when it
  // waits for results. Never a (key, stage) it proposed before.
  virtual std::vector<Proposal> propose(size_t n, size_t open) = 0;
  // The verifications it wants made now, however full the queue is (asked after each result while propose is not):
  // the model strategy's front, whose verification would otherwise wait behind the screens queued before a faster
  // one landed; none by default. Never a (key, stage) it proposed before.
  virtual std::vector<Proposal> urgent() { return {}; }
  // Learns from a finished plan.
  virtual void take(const Observation& o) = 0;
  // How many plans it means to measure in all (the progress line's "planned").
  virtual uint64_t planned() const = 0;
  // True once it proposes nothing more, whatever the open plans yield.
  virtual bool done() const = 0;
  // Its state: settings, cursors, what it proposed; restore_strategy reads it back.
  virtual nlohmann::json save() const = 0;
  // What it is doing, in a line for the user (warm start, verifying the front, ...); empty when nothing to say.
  virtual std::string note() const { return ""; }
};

// The strategies a job may ask for: grid, random, halving, model.
bool known_strategy(const std::string& s);
// A new strategy for `space` (which must outlive it); throws lt::Error for an unknown strategy.
std::unique_ptr<Strategy> make_strategy(const SearchSpace& space, const SearchSettings& settings);
// The strategy `saved` (a save() of one) over `space`; throws lt::Error when `saved` is not one.
std::unique_ptr<Strategy> restore_strategy(const SearchSpace& space, const nlohmann::json& saved);
// The fixed strategy (nightly runs of releases): exactly `knobs`, each verified with `repetitions`; throws lt::Error
// naming the first configuration that is not a point of the space.
std::unique_ptr<Strategy> fixed_strategy(const SearchSpace& space, const std::vector<nlohmann::json>& knobs,
                                         uint32_t repetitions);

// The configuration's canonical knobs (every knob) in `space`.
nlohmann::json canonical(const SearchSpace& space, const nlohmann::json& knobs);
// A short stable name of a configuration's key (16 hex digits), what strategies remember proposals by.
std::string key_hash(const std::string& key);

// The model strategy (model_search.cpp) and successive halving (halving.cpp), for the factory.
std::unique_ptr<Strategy> model_strategy(const SearchSpace& space, const SearchSettings& s,
                                         const nlohmann::json& saved);
std::unique_ptr<Strategy> halving_strategy(const SearchSpace& space, const SearchSettings& s,
                                           const nlohmann::json& saved);

nlohmann::json to_json(const SearchSettings& s);
SearchSettings settings_from_json(const nlohmann::json& j);

}  // namespace lt::coord
