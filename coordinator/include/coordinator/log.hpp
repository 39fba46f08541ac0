// The coordinator's structured log: one `key=value` line per event on stderr, quiet unless verbose.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

namespace lt::coord {

// 0: warnings and errors only; 1 (-v): every request that changes state; 2 (-vv): everything.
int& log_level();
void log(int level, const char* event, std::initializer_list<std::pair<const char*, std::string>> fields);

}  // namespace lt::coord
