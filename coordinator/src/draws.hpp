// The configurations random sampling and successive halving's first round take, one at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "coordinator/space.hpp"

namespace lt::coord {

// `budget` distinct points drawn with the seed's generator (the draws lane-tune has always made for a seed), or
// every point in grid order, by a cursor over the ordinals, when the budget is 0 or covers the space. Restored from
// save(): the cursor, or the draws made again from the seed.
class Draws {
 public:
  Draws(const SearchSpace& space, uint32_t budget, uint64_t seed, const nlohmann::json& saved);
  // The next point; nullopt once every point it means to give is given.
  std::optional<nlohmann::json> next();
  // How many points it gives in all (fewer than the budget when the draws keep meeting points drawn before).
  uint64_t total() const { return total_; }
  uint64_t taken() const { return taken_; }
  bool exhausted() const { return taken_ >= total_; }
  nlohmann::json save() const;

 private:
  const SearchSpace& space_;
  bool every_ = true;
  uint64_t total_ = 0, taken_ = 0, cursor_ = 0, tries_ = 0;
  std::mt19937_64 rng_;
  std::set<std::string> keys_;
};

}  // namespace lt::coord
