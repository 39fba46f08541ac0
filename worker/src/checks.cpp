// Timing statistics and the logits checks against the precise lane.
#include "worker/checks.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "compiler/digest.hpp"
#include "compiler/error.hpp"

namespace lt::worker {

Timing timing(std::vector<double> s) {
  if (s.empty()) return {};
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  Timing t;
  t.median = median(s);
  std::vector<double> dev;
  for (double x : s) dev.push_back(std::abs(x - t.median));
  t.spread = median(dev);
  auto [lo, hi] = std::minmax_element(s.begin(), s.end());
  t.min = *lo;
  t.max = *hi;
  return t;
}

Agreement compare_logits(std::span<const float> a, std::span<const float> ref, size_t vocab) {
  if (vocab == 0 || a.size() != ref.size() || a.size() % vocab != 0)
    throw lt::Error("logits of " + std::to_string(a.size()) + " floats do not match the reference's " +
                    std::to_string(ref.size()) + " (vocabulary " + std::to_string(vocab) + ")");
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = double(a[i]) - double(ref[i]);
    diff += d * d;
    norm += double(ref[i]) * double(ref[i]);
  }
  size_t positions = a.size() / vocab, same = 0;
  for (size_t p = 0; p < positions; ++p) {
    auto row = a.subspan(p * vocab, vocab), rrow = ref.subspan(p * vocab, vocab);
    same += std::max_element(row.begin(), row.end()) - row.begin() ==
            std::max_element(rrow.begin(), rrow.end()) - rrow.begin();
  }
  Agreement g;
  g.rel_l2 = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  if (!std::isfinite(g.rel_l2)) g.rel_l2 = INFINITY;
  g.argmax_agree = positions ? double(same) / double(positions) : 1;
  return g;
}

GenerationAgreement compare_generation(std::span<const float> a, std::span<const float> ref, size_t vocab,
                                       const std::vector<size_t>& rows, double tie) {
  size_t total = 0;
  for (size_t r : rows) total += r;
  if (vocab == 0 || a.size() != ref.size() || a.size() != total * vocab)
    throw lt::Error("logits of " + std::to_string(a.size()) + " floats do not match the reference's " +
                    std::to_string(ref.size()) + " (" + std::to_string(total) + " rows of " + std::to_string(vocab) +
                    ")");
  GenerationAgreement g;
  std::vector<float> keep, keep_ref;
  size_t at = 0;
  for (size_t n : rows) {
    for (size_t i = 0; i < n; ++i) {
      auto row = a.subspan((at + i) * vocab, vocab), rrow = ref.subspan((at + i) * vocab, vocab);
      keep.insert(keep.end(), row.begin(), row.end());
      keep_ref.insert(keep_ref.end(), rrow.begin(), rrow.end());
      ++g.rows_compared;
      const size_t mine = std::max_element(row.begin(), row.end()) - row.begin();
      const size_t best = std::max_element(rrow.begin(), rrow.end()) - rrow.begin();
      if (mine == best) continue;
      double ss = 0;
      for (float v : rrow) ss += double(v) * double(v);
      const double rms = std::sqrt(ss / double(vocab));
      if (tie > 0 && double(rrow[best]) - double(rrow[mine]) <= tie * rms)
        ++g.near_ties;
      else
        g.explained = false;
      break;  // the prompt's contexts differ from here on
    }
    at += n;
  }
  g.a = compare_logits(keep, keep_ref, vocab);
  if (g.rows_compared) g.a.argmax_agree = std::min(1.0, g.a.argmax_agree + double(g.near_ties) / double(g.rows_compared));
  return g;
}

std::string logits_hash(std::span<const float> logits) {
  return hex64(XXH64(logits.data(), logits.size_bytes(), 0));
}

std::vector<float> read_logits(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw lt::Error("the lane wrote no logits file " + path);
  auto n = size_t(in.tellg());
  if (n % 4) throw lt::Error("the logits file " + path + " is not a whole number of f32");
  std::vector<float> v(n / 4);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), std::streamsize(n));
  return v;
}

}  // namespace lt::worker
