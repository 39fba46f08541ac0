// lane-tune's structured log, shared by the coordinator and the worker: one `key=value` line per event on stderr,
// quiet unless verbose.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

namespace lt::logging {

// 0: warnings and errors only; 1 (-v): every event that changes state; 2 (-vv): everything.
int& level();
// Writes `ts=... component=<component> event=<event> key=value ...` when `lvl` is at most level(); values as
// logfmt_value writes them.
void write(int lvl, const char* component, const char* event,
           std::initializer_list<std::pair<const char*, std::string>> fields);

// A value as logfmt takes it: bare when it is plain, else quoted with backslash, quote and control characters escaped
// (\\, \", \n, \r, \t, \u00XX), so that a value never breaks a line or another key's pair.
std::string logfmt_value(const std::string& v);

}  // namespace lt::logging
