// Search strategies: which configurations a job measures for a GPU kind, and which successive halving promotes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/space.hpp"

namespace lt::coord {

// How much each strategy measures.
struct SearchOptions {
  uint32_t repetitions = 10;         // grid and random: timed repetitions per configuration
  uint32_t halving_repetitions = 3;  // successive halving's first round; each later round multiplies it by eta
  uint32_t eta = 3;                  // successive halving keeps the best 1/eta of a round
  uint32_t max_stages = 3;
};

bool known_strategy(const std::string& s);

// The configurations a job starts with: grid, every point; random, `budget` distinct points drawn with `seed`;
// halving, `budget` points (every point when the space is no larger) for its first round. Budget 0: every point.
std::vector<nlohmann::json> initial_configs(const SearchSpace& space, const std::string& strategy, uint32_t budget,
                                            uint64_t seed);

// The fixed strategy (nightly runs of releases): exactly the given configurations, each checked to be a point of the
// space; throws lt::Error naming the first that is not.
std::vector<nlohmann::json> fixed_configs(const SearchSpace& space, const std::vector<nlohmann::json>& knobs);

// Repetitions for a round of a strategy.
uint32_t repetitions(const std::string& strategy, uint32_t stage, const SearchOptions& o);

// One finished plan of a round, as successive halving ranks it.
struct Measured {
  int64_t config = 0;
  bool valid = false;
  double median_ms = 0;
};

// The configurations promoted from a round of `planned` plans to the next: the best ceil(planned/eta) valid ones,
// fastest first; none when the round was the last (a single survivor, or max_stages reached).
std::vector<int64_t> promote(std::vector<Measured> round, uint32_t stage, size_t planned, const SearchOptions& o);

}  // namespace lt::coord
