// The search strategies: grid, random with a budget, successive halving.
#include "coordinator/strategy.hpp"

#include <algorithm>
#include <random>
#include <set>

#include "compiler/error.hpp"

namespace lt::coord {

bool known_strategy(const std::string& s) {
  return s == "grid" || s == "random" || s == "halving";
}

std::vector<nlohmann::json> initial_configs(const SearchSpace& space, const std::string& strategy, uint32_t budget,
                                            uint64_t seed) {
  if (strategy == "grid" || budget == 0 || budget >= space.size()) return space.enumerate();
  std::mt19937_64 rng(seed);
  std::vector<nlohmann::json> picked;
  std::set<std::string> keys;
  for (size_t tries = 0; picked.size() < budget && tries < size_t(budget) * 50; ++tries) {
    auto k = space.sample(rng);
    if (keys.insert(space.key(k)).second) picked.push_back(std::move(k));
  }
  return picked;
}

std::vector<nlohmann::json> fixed_configs(const SearchSpace& space, const std::vector<nlohmann::json>& knobs) {
  for (auto& k : knobs)
    if (!space.contains(k))
      throw lt::Error("the configuration " + k.dump() + " is not in this checkpoint's knob space any more");
  return knobs;
}

uint32_t repetitions(const std::string& strategy, uint32_t stage, const SearchOptions& o) {
  if (strategy != "halving") return o.repetitions;
  uint32_t r = o.halving_repetitions;
  for (uint32_t i = 0; i < stage; ++i) r *= o.eta;
  return r;
}

std::vector<int64_t> promote(std::vector<Measured> round, uint32_t stage, size_t planned, const SearchOptions& o) {
  if (planned <= 1 || stage + 1 >= o.max_stages) return {};
  size_t keep = (planned + o.eta - 1) / o.eta;
  std::erase_if(round, [](const Measured& m) { return !m.valid; });
  std::stable_sort(round.begin(), round.end(),
                   [](const Measured& a, const Measured& b) { return a.median_ms < b.median_ms; });
  std::vector<int64_t> v;
  for (size_t i = 0; i < round.size() && i < keep; ++i) v.push_back(round[i].config);
  return v;
}

}  // namespace lt::coord
