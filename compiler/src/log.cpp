// lane-tune's structured log lines.
#include "compiler/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <nlohmann/json.hpp>

#include "compiler/error.hpp"

namespace lt::logging {

int& level() {
  static int level = 0;
  return level;
}

Format& format() {
  static Format f = Format::Logfmt;
  return f;
}

Format parse_format(const std::string& name) {
  if (name == "logfmt") return Format::Logfmt;
  if (name == "json") return Format::Json;
  throw Error("unknown log format \"" + name + "\" (logfmt, json)");
}

namespace {
// How many bytes the UTF-8 sequence at v[i] takes, or 0 when it is not one (a stray or overlong byte, a surrogate, a
// sequence cut short, past U+10FFFF).
size_t utf8_length(const std::string& v, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(v[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? (c <= 0xEF ? 3 : 0) : c >= 0xC2 ? 2 : 0;
  if (n == 0 || i + n > v.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  const unsigned char second = byte(i + 1);
  if ((c == 0xE0 && second < 0xA0) || (c == 0xED && second >= 0xA0) || (c == 0xF0 && second < 0x90) ||
      (c == 0xF4 && second >= 0x90))
    return 0;
  return n;
}

// Whether `v` can stand bare: not empty, and no space, quote, `=`, backslash, control character or byte outside
// valid UTF-8.
bool plain(const std::string& v) {
  if (v.empty()) return false;
  for (size_t i = 0; i < v.size();) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return false;
    const size_t n = utf8_length(v, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}
}  // namespace

std::string logfmt_value(const std::string& v) {
  if (plain(v)) return v;
  std::string out = "\"";
  for (size_t i = 0; i < v.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(v[i]);
    if (c >= 0x80) {  // a valid sequence as it is; a byte outside one as U+FFFD, as a decoder would read it
      const size_t n = utf8_length(v, i);
      out += n ? v.substr(i, n) : std::string("\\ufffd");
      i += n ? n - 1 : 0;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < ' ' || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", c);
          out += hex;
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

std::string logfmt_line(const std::string& ts, const char* component, const char* event,
                        std::initializer_list<std::pair<const char*, std::string>> fields) {
  std::string line =
      "ts=" + logfmt_value(ts) + " component=" + logfmt_value(component) + " event=" + logfmt_value(event);
  for (auto& [k, v] : fields) line += std::string(" ") + k + "=" + logfmt_value(v);
  return line;
}

std::string json_line(const std::string& ts, const char* component, const char* event,
                      std::initializer_list<std::pair<const char*, std::string>> fields) {
  nlohmann::ordered_json line = {{"ts", ts}, {"component", component}, {"event", event}};
  for (auto& [k, v] : fields) line[k] = v;
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void write(int lvl, const char* component, const char* event,
           std::initializer_list<std::pair<const char*, std::string>> fields) {
  if (lvl > level()) return;
  static std::mutex m;
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char ts[32];
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string line =
      (format() == Format::Json ? json_line(ts, component, event, fields) : logfmt_line(ts, component, event, fields)) +
      "\n";
  std::lock_guard lock(m);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace lt::logging
