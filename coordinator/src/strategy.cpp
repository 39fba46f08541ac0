// The strategy factory and the strategies that walk the space without learning: grid (lazy, by ordinal), random
// (budget draws), fixed (nightly runs); the draws they share with successive halving.
#include "coordinator/strategy.hpp"

#include <set>

#include <xxhash.h>

#include "compiler/digest.hpp"
#include "compiler/error.hpp"
#include "draws.hpp"

namespace lt::coord {

nlohmann::json to_json(const SearchOptions& o) {
  return {{"repetitions", o.repetitions},
          {"halving_repetitions", o.halving_repetitions},
          {"eta", o.eta},
          {"max_stages", o.max_stages},
          {"screen_repetitions", o.screen_repetitions},
          {"verify_repetitions", o.verify_repetitions},
          {"model_budget", o.model_budget},
          {"queue", o.queue},
          {"warm", o.warm}};
}

SearchOptions search_options_from_json(const nlohmann::json& j) {
  SearchOptions o;
  o.repetitions = j.value("repetitions", o.repetitions);
  o.halving_repetitions = j.value("halving_repetitions", o.halving_repetitions);
  o.eta = std::max<uint32_t>(2, j.value("eta", o.eta));
  o.max_stages = std::max<uint32_t>(1, j.value("max_stages", o.max_stages));
  o.screen_repetitions = j.value("screen_repetitions", o.screen_repetitions);
  o.verify_repetitions = j.value("verify_repetitions", o.verify_repetitions);
  o.model_budget = j.value("model_budget", o.model_budget);
  o.queue = j.value("queue", o.queue);
  o.warm = j.value("warm", o.warm);
  return o;
}

nlohmann::json to_json(const SearchSettings& s) {
  nlohmann::json warm = nlohmann::json::array();
  for (auto& w : s.warm) warm.push_back({{"knobs", w.knobs}, {"origin", w.origin}});
  return {
      {"strategy", s.strategy},        {"budget", s.budget}, {"seed", s.seed}, {"objective", to_string(s.objective)},
      {"options", to_json(s.options)}, {"warm", warm}};
}

SearchSettings settings_from_json(const nlohmann::json& j) {
  SearchSettings s;
  s.strategy = j.value("strategy", "");
  s.budget = j.value("budget", 0u);
  s.seed = j.value("seed", uint64_t{0});
  s.objective = parse_objective(j.value("objective", ""));
  s.options = search_options_from_json(j.value("options", nlohmann::json::object()));
  for (auto& w : j.value("warm", nlohmann::json::array())) s.warm.push_back({w.at("knobs"), w.value("origin", "")});
  return s;
}

nlohmann::json canonical(const SearchSpace& space, const nlohmann::json& knobs) {
  return nlohmann::json::parse(space.key(knobs));
}

std::string key_hash(const std::string& key) {
  return hex64(XXH64(key.data(), key.size(), 0));
}

// ---- Draws ----

Draws::Draws(const SearchSpace& space, uint32_t budget, uint64_t seed, const nlohmann::json& saved)
    : space_(space), rng_(seed) {
  const uint64_t size = space.size();
  every_ = budget == 0 || budget >= size;
  total_ = every_ ? size : budget;
  if (every_) {
    cursor_ = saved.value("cursor", uint64_t{0});
    taken_ = saved.value("taken", uint64_t{0});
    return;
  }
  // The generator's state is the draws made: they are made again.
  const uint64_t taken = saved.value("taken", uint64_t{0});
  while (taken_ < taken && next()) {
  }
}

std::optional<nlohmann::json> Draws::next() {
  if (every_) {
    while (cursor_ < space_.raw_size()) {
      auto k = space_.at(cursor_++);
      if (k) {
        ++taken_;
        return k;
      }
    }
    total_ = taken_;
    return std::nullopt;
  }
  // Budget draws: distinct points drawn with the seed's generator, at most 50 tries per point of the budget.
  while (taken_ < total_ && tries_ < uint64_t(total_) * 50) {
    ++tries_;
    auto k = space_.sample(rng_);
    if (keys_.insert(space_.key(k)).second) {
      ++taken_;
      return k;
    }
  }
  total_ = taken_;
  return std::nullopt;
}

nlohmann::json Draws::save() const {
  return {{"taken", taken_}, {"cursor", cursor_}};
}

namespace {

// A strategy that measures the points its Draws yield, each verified: the grid (every point of the space in its fixed
// order, walked by a cursor over the ordinals: budget 0) or random sampling (`budget` distinct points drawn with the
// job's seed; every point in grid order when the budget is 0 or covers the space).
class Drawn : public Strategy {
 public:
  Drawn(std::string name, const SearchSpace& space, SearchSettings s, const nlohmann::json& saved)
      : name_(std::move(name)),
        s_(std::move(s)),
        draws_(space, name_ == "grid" ? 0 : s_.budget, name_ == "grid" ? 0 : s_.seed,
               saved.value("draws", nlohmann::json::object())) {}
  std::string name() const override { return name_; }
  std::vector<Proposal> propose(size_t n, size_t) override {
    std::vector<Proposal> out;
    while (out.size() < n)
      if (auto k = draws_.next())
        out.push_back({*k, "", 0, s_.options.repetitions, true, true, name_});
      else
        break;
    return out;
  }
  void take(const Observation&) override {}
  uint64_t planned() const override { return draws_.total(); }
  bool done() const override { return draws_.exhausted(); }
  nlohmann::json save() const override { return {{"settings", to_json(s_)}, {"draws", draws_.save()}}; }

 private:
  std::string name_;
  SearchSettings s_;
  Draws draws_;
};

// Exactly the given configurations, each verified once (a release's nightly run).
class Fixed : public Strategy {
 public:
  Fixed(std::vector<nlohmann::json> knobs, uint32_t repetitions, size_t next)
      : knobs_(std::move(knobs)), repetitions_(repetitions), next_(std::min(next, knobs_.size())) {}
  std::string name() const override { return "fixed"; }
  std::vector<Proposal> propose(size_t n, size_t) override {
    std::vector<Proposal> out;
    for (; next_ < knobs_.size() && out.size() < n; ++next_)
      out.push_back({knobs_[next_], "", 0, repetitions_, true, false, "fixed"});
    return out;
  }
  void take(const Observation&) override {}
  uint64_t planned() const override { return knobs_.size(); }
  bool done() const override { return next_ >= knobs_.size(); }
  nlohmann::json save() const override {
    return {{"settings", {{"strategy", "fixed"}}}, {"configs", knobs_}, {"repetitions", repetitions_}, {"next", next_}};
  }

 private:
  std::vector<nlohmann::json> knobs_;
  uint32_t repetitions_;
  size_t next_;
};

// Fills each candidate's key (what plans are stored by) where the strategy left it out.
class Keyed : public Strategy {
 public:
  Keyed(const SearchSpace& space, std::unique_ptr<Strategy> inner) : space_(space), inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::vector<Proposal> propose(size_t n, size_t open) override { return keyed(inner_->propose(n, open)); }
  std::vector<Proposal> urgent() override { return keyed(inner_->urgent()); }
  void take(const Observation& o) override { inner_->take(o); }
  uint64_t planned() const override { return inner_->planned(); }
  bool done() const override { return inner_->done(); }
  nlohmann::json save() const override { return inner_->save(); }
  std::string note() const override { return inner_->note(); }

 private:
  std::vector<Proposal> keyed(std::vector<Proposal> v) const {
    for (auto& c : v)
      if (c.key.empty()) c.key = space_.key(c.knobs);
    return v;
  }

  const SearchSpace& space_;
  std::unique_ptr<Strategy> inner_;
};

std::unique_ptr<Strategy> build(const SearchSpace& space, const SearchSettings& s, const nlohmann::json& saved) {
  std::unique_ptr<Strategy> st;
  if (s.strategy == "grid")
    st = std::make_unique<Drawn>("grid", space, s, saved);
  else if (s.strategy == "random")
    st = std::make_unique<Drawn>("random", space, s, saved);
  else if (s.strategy == "halving")
    st = halving_strategy(space, s, saved);
  else if (s.strategy == "model")
    st = model_strategy(space, s, saved);
  else
    throw lt::Error("unknown strategy '" + s.strategy + "' (grid, random, halving, model)");
  return std::make_unique<Keyed>(space, std::move(st));
}

}  // namespace

bool known_strategy(const std::string& s) {
  return s == "grid" || s == "random" || s == "halving" || s == "model";
}

std::unique_ptr<Strategy> make_strategy(const SearchSpace& space, const SearchSettings& settings) {
  return build(space, settings, nlohmann::json::object());
}

std::unique_ptr<Strategy> restore_strategy(const SearchSpace& space, const nlohmann::json& saved) {
  if (!saved.is_object()) throw lt::Error("a search's saved state is not a JSON object");
  if (saved.value("legacy", false)) return std::make_unique<Fixed>(std::vector<nlohmann::json>{}, 1, 0);
  auto settings = saved.value("settings", nlohmann::json::object());
  if (settings.value("strategy", "") == "fixed") {
    std::vector<nlohmann::json> knobs;
    for (auto& k : saved.value("configs", nlohmann::json::array())) knobs.push_back(k);
    return std::make_unique<Keyed>(
        space, std::make_unique<Fixed>(knobs, saved.value("repetitions", 1u), saved.value("next", size_t{0})));
  }
  return build(space, settings_from_json(settings), saved);
}

std::unique_ptr<Strategy> fixed_strategy(const SearchSpace& space, const std::vector<nlohmann::json>& knobs,
                                         uint32_t repetitions) {
  std::vector<nlohmann::json> v;
  for (auto& k : knobs) {
    if (!space.contains(k))
      throw lt::Error("the configuration " + k.dump() + " is not in this checkpoint's knob space any more");
    v.push_back(canonical(space, k));
  }
  return std::make_unique<Keyed>(space, std::make_unique<Fixed>(v, std::max<uint32_t>(repetitions, 1), 0));
}

}  // namespace lt::coord
