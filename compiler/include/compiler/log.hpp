// lane-tune's structured log, shared by the coordinator and the worker: one line per event on stderr, logfmt
// (`key=value`) or JSON (`--log-format json`), quiet unless verbose.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

namespace lt::logging {

// 0: warnings and errors only; 1 (-v): every event that changes state; 2 (-vv): everything.
int& level();

// How write() prints a line: logfmt (the default) or one JSON object.
enum class Format { Logfmt, Json };
Format& format();
// Reads "logfmt" or "json"; throws lt::Error naming the accepted ones otherwise.
Format parse_format(const std::string& name);
// Writes `ts=... component=<component> event=<event> key=value ...` when `lvl` is at most level(); values as
// logfmt_value writes them.
void write(int lvl, const char* component, const char* event,
           std::initializer_list<std::pair<const char*, std::string>> fields);

// The line write() prints (without its newline): `ts=<ts> component=<component> event=<event>` then `key=value` per
// field, every value as logfmt_value writes it. REQUIRES: keys are plain words (the code's own literals).
std::string logfmt_line(const std::string& ts, const char* component, const char* event,
                        std::initializer_list<std::pair<const char*, std::string>> fields);

// The line write() prints as JSON (without its newline): {"ts":..,"component":..,"event":.., then each field}, every
// value a string, written by nlohmann-json (a byte outside valid UTF-8 as U+FFFD).
std::string json_line(const std::string& ts, const char* component, const char* event,
                      std::initializer_list<std::pair<const char*, std::string>> fields);

// A value as logfmt takes it: bare when it is plain, else quoted with backslash, quote and control characters escaped
// (\\, \", \n, \r, \t, \u00XX) and a byte outside valid UTF-8 as \ufffd, so that a value never breaks a line or
// another key's pair, and a decoder reads back what was written (of valid UTF-8).
//
// Written by hand rather than through spdlog or fmt (Debian's libspdlog-dev, libfmt-dev): neither writes logfmt
// (spdlog formats and routes lines, fmt's "{:?}" escapes as C++ does, \x{..}); the escaping is all this needs. The JSON
// lines (--log-format json) are nlohmann-json's.
std::string logfmt_value(const std::string& v);

}  // namespace lt::logging
