// Figures scaled and rounded for people.
#include "output/units.hpp"

#include <cmath>
#include <cstdio>

namespace lt::cli {
namespace {

std::string printf_1(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

// `x` rounded to `digits` significant figures (0 stays 0).
double round_significant(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, digits - 1 - int(std::floor(std::log10(std::fabs(x)))));
  return std::round(x * scale) / scale;
}

// A time in milliseconds, rounded to `digits` significant figures first, then scaled (so 999.96 us is "1 ms").
std::string scaled_ms(double ms, int digits) {
  if (!std::isfinite(ms)) return "-";
  const double r = round_significant(ms, digits);
  const double a = std::fabs(r);
  if (a == 0) return "0";
  if (a < 1e-3) return significant(r * 1e6, digits) + " ns";
  if (a < 1) return significant(r * 1e3, digits) + " us";
  if (a < 1000) return significant(r, digits) + " ms";
  return significant(r / 1000, digits) + " s";
}

}  // namespace

std::string significant(double x, int digits) {
  if (!std::isfinite(x)) return printf_1("%g", x);
  const double r = round_significant(x, digits);
  if (r == 0) return "0";
  const int magnitude = int(std::floor(std::log10(std::fabs(r))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, r);
  return b;
}

std::string duration_ms(double ms) {
  return scaled_ms(ms, 3);
}

std::string spread_ms(double ms) {
  return scaled_ms(ms, 2);
}

std::string rate(double per_s, const std::string& unit) {
  return (std::fabs(per_s) >= 100 ? thousands(per_s) : significant(per_s, 3)) + " " + unit;
}

std::string thousands(double x) {
  const std::string digits = printf_1("%.0f", x);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

std::string age(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 120) return printf_1("%.0fs", s);
  if (s < 7200) return printf_1("%.0fm", s / 60);
  if (s < 2 * 86400) return printf_1("%.1fh", s / 3600);
  return printf_1("%.1fd", s / 86400);
}

}  // namespace lt::cli
