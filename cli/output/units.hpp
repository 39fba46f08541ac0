// Figures as people read them: times scaled to ns, us, ms or s, rates in tok/s, spreads to two significant figures,
// counts with thousands separators, ages in s, m, h or d.
#pragma once

#include <string>

namespace lt::cli {

// `x` rounded to `digits` significant figures, without an exponent: significant(0.0473, 2) is "0.047",
// significant(1234, 3) "1230".
std::string significant(double x, int digits);
// A time given in milliseconds, scaled to ns, us, ms or s with three significant figures: "50 ns", "2.91 ms",
// "1.23 s".
std::string duration_ms(double ms);
// A spread (a median absolute deviation) given in milliseconds, scaled as duration_ms, to two significant figures:
// a 50 ns spread is "50 ns", not 0.0000.
std::string spread_ms(double ms);
// A rate per second with its unit: "6,300 tok/s" (whole from 100 up), "87.5 tok/s".
std::string rate(double per_s, const std::string& unit = "tok/s");
// A whole number with thousands separators: 6,300.
std::string thousands(double x);
// How long ago, or how long left, in seconds: "45s", "12m", "3.5h", "2.0d".
std::string age(double seconds);

}  // namespace lt::cli
