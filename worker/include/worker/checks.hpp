// The checks a configuration must pass, and the statistics of its timings: pure functions the CUDA runner uses.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

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

// xxh64 of the logits' bytes, 16 hex digits.
std::string logits_hash(std::span<const float> logits);

// The relative L2 error a numerics mode may show against the precise lane, and the arg-max agreement it must reach.
struct Tolerance {
  double rel_l2 = 1e-3;
  double argmax_agree = 0.99;
};
Tolerance tolerance(const std::string& numerics);

// Reads a little-endian f32 logits file.
std::vector<float> read_logits(const std::string& path);

}  // namespace lt::worker
