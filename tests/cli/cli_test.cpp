// The lane-tune binary's own contract: --version, --help, and errors for bad commands.
#include <gtest/gtest.h>

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

}  // namespace lt::test
