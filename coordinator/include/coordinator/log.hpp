// The coordinator's structured log: one `key=value` line per event on stderr, quiet unless verbose.
#pragma once

#include "compiler/log.hpp"

namespace lt::coord {

// 0: warnings and errors only; 1 (-v): every request that changes state; 2 (-vv): everything.
inline int& log_level() { return logging::level(); }
inline void log(int level, const char* event, std::initializer_list<std::pair<const char*, std::string>> fields) {
  logging::write(level, "coordinator", event, fields);
}

}  // namespace lt::coord
