// Helpers the test suites share: scratch directories, running the CLI, synthesized checkpoints.
#pragma once

#include <filesystem>
#include <string>

namespace lt::test {

// A fresh directory under the build tree, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// What a command printed and how it exited.
struct Output {
  int status = -1;  // the exit code, or -1 when it did not exit normally
  std::string out;  // stdout and stderr together
};

// Runs `command` through the shell, capturing stdout and stderr.
Output run(const std::string& command);

// The lane-tune binary under test.
std::string cli();

}  // namespace lt::test
