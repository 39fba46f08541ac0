// lane-tune's structured log lines.
#include "compiler/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace lt::logging {

int& level() {
  static int level = 0;
  return level;
}

std::string logfmt_value(const std::string& v) {
  bool plain = !v.empty();
  for (unsigned char c : v) plain = plain && c > ' ' && c != '"' && c != '=' && c != '\\' && c != 0x7f;
  if (plain) return v;
  std::string out = "\"";
  for (unsigned char c : v) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
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

void write(int lvl, const char* component, const char* event,
           std::initializer_list<std::pair<const char*, std::string>> fields) {
  if (lvl > level()) return;
  static std::mutex m;
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char ts[32];
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::string line = std::string("ts=") + ts + " component=" + component + " event=" + event;
  for (auto& [k, v] : fields) line += std::string(" ") + k + "=" + logfmt_value(v);
  std::lock_guard lock(m);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace lt::logging
