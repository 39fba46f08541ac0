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
  for (auto& [k, v] : fields) {
    bool quote = v.empty() || v.find_first_of(" \t\"=") != std::string::npos;
    line += std::string(" ") + k + "=" + (quote ? "\"" + v + "\"" : v);
  }
  std::lock_guard lock(m);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace lt::logging
