// The lane-tune binary's own contract: --version, --help, and errors for bad commands.
#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.hpp"

namespace lt::test {

TEST(Cli, VersionPrintsTheVersion) {
  Output r = run(cli() + " --version");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("lane-tune 0."), std::string::npos) << r.out;
}

TEST(Cli, HelpListsOnlyWorkingCommands) {
  Output r = run(cli() + " --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.find("not implemented"), std::string::npos);
}

TEST(Cli, UnknownCommandIsAUsageError) {
  Output r = run(cli() + " frobnicate");
  EXPECT_NE(r.status, 0);
}

// The coordinator's numeric flags are checked before anything starts; a token file keeps the token off argv.
TEST(Cli, TheCoordinatorRefusesBadFlags) {
  TempDir dir;
  const std::string db = " --db " + (dir / "lt.db").string();
  for (const char* bad : {" --lease -5", " --lease 0", " --time-limit 0", " --repetitions 0", " --warmup -1",
                          " --cutoff 0.5", " --listen 127.0.0.1:99999", " --listen 0.0.0.0:0",
                          " --token-file /nonexistent/token", " --token a --token-file /dev/null"}) {
    Output r = run(cli() + " coordinator" + db + bad);
    EXPECT_NE(r.status, 0) << bad;
    EXPECT_FALSE(r.out.empty()) << bad;  // says why
  }
  std::ofstream(dir / "empty-token");
  Output empty = run(cli() + " coordinator" + db + " --token-file " + (dir / "empty-token").string());
  EXPECT_NE(empty.status, 0);
  EXPECT_NE(empty.out.find("empty"), std::string::npos) << empty.out;
}

}  // namespace lt::test
