// The checks a configuration must pass, and the statistics of its timings: pure functions the CUDA runner uses.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/knobs.hpp"

namespace lt::worker {

// Median, spread (median absolute deviation), minimum and maximum of repeated timings.
struct Timing {
  double median = 0, spread = 0, min = 0, max = 0;
};
Timing timing(std::vector<double> samples);

// How a lane's logits compare with the precise lane's.
struct Agreement {
  double rel_l2 = 0;        // ||a - ref|| / ||ref||
  double argmax_agree = 0;  // fraction of positions (rows of `vocab`) with the same arg-max
};
// Throws lt::Error when the sizes differ or are not whole positions.
Agreement compare_logits(std::span<const float> logits, std::span<const float> reference, size_t vocab);

// A generation's logits against the reference's, prompt by prompt (`rows[i]` logits rows for prompt i). A lossy
// numerics may flip a near tie: at the first row of a prompt whose arg-max differs, where the reference's own logits
// put the lane's choice within `tie` times the row's RMS of its best, the flip is counted and that row is the prompt's
// last compared (the contexts differ after it), and counts as agreeing in `a.argmax_agree` (a near tie's flip is what
// the numerics' error allows, not a disagreement). Any other difference of arg-max leaves `explained` false and
// counts against the agreement. With tie = 0 every flip is unexplained.
struct GenerationAgreement {
  Agreement a;  // over the rows compared
  size_t rows_compared = 0;
  size_t near_ties = 0;   // flips explained as near ties
  bool explained = true;  // every arg-max difference is a near tie's flip
};
// Throws lt::Error when the sizes differ from the rows given.
GenerationAgreement compare_generation(std::span<const float> logits, std::span<const float> reference, size_t vocab,
                                       const std::vector<size_t>& rows, double tie);

// xxh64 of the logits' bytes, 16 hex digits.
std::string logits_hash(std::span<const float> logits);

// The judge's bounds: the compiler's (knobs::tolerance), which every lane's lane.json also carries.
using knobs::Tolerance;
using knobs::tolerance;

// Reads a little-endian f32 logits file.
std::vector<float> read_logits(const std::string& path);

}  // namespace lt::worker
