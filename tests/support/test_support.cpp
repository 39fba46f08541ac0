// Helpers the test suites share.
#include "support/test_support.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace lt::test {

TempDir::TempDir() {
  std::random_device rd;
  auto base = std::filesystem::path(LT_BINARY_DIR) / "test-tmp";
  std::filesystem::create_directories(base);
  for (;;) {
    path_ = base / ("t" + std::to_string(rd()));
    if (std::filesystem::create_directory(path_)) break;
  }
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Output run(const std::string& command) {
  Output r;
  std::string full = command + " 2>&1";
  FILE* p = popen(full.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + command);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string cli() {
  return LT_CLI;
}

}  // namespace lt::test
