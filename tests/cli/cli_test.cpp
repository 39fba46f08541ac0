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

// --help ends with the README's table of exit statuses.
TEST(Cli, HelpListsTheExitStatuses) {
  Output r = run(cli() + " --help");
  EXPECT_EQ(r.status, 0);
  const size_t table = r.out.find("Exit statuses:");
  ASSERT_NE(table, std::string::npos) << r.out;
  for (const char* line :
       {"0  done", "1  failed", "2  the command line is wrong", "3  not found", "6  the coordinator cannot be reached"})
    EXPECT_NE(r.out.find(line, table), std::string::npos) << line << "\n" << r.out;
}

// The exit statuses of the README's table: usage 2, not found 3, a coordinator that cannot be reached 6, a failure 1.
TEST(Cli, ExitStatusesSayWhatWentWrong) {
  EXPECT_EQ(run(cli() + " frobnicate").status, 2);
  EXPECT_EQ(run(cli() + " inspect --frobnicate x.gguf").status, 2);  // an unknown flag
  EXPECT_EQ(run(cli() + " synth --preset").status, 2);               // an option without its value
  EXPECT_EQ(run(cli() + " --version").status, 0);
  Output away = run(cli() + " status 1 --coordinator 127.0.0.1:1");
  EXPECT_EQ(away.status, 6) << away.out;
  EXPECT_NE(away.out.find("cannot reach the coordinator"), std::string::npos) << away.out;
  EXPECT_EQ(run(cli() + " inspect /nonexistent.gguf").status, 3);
  EXPECT_EQ(run(cli() + " digest /nonexistent.gguf").status, 3);
  EXPECT_EQ(run(cli() + " inspect /").status, 1);  // there, but not a checkpoint
}

// --format takes the four formats and nothing else (a usage error naming them); --json is its alias, not a second
// answer to the same question.
TEST(Cli, FormatIsCheckedAsTheCommandLineIsRead) {
  Output xml = run(cli() + " digest --format xml /nonexistent");
  EXPECT_EQ(xml.status, 2) << xml.out;
  EXPECT_NE(xml.out.find("unknown format 'xml' (table, json, csv or md)"), std::string::npos) << xml.out;
  EXPECT_EQ(run(cli() + " status --json --format csv --coordinator 127.0.0.1:1").status, 2);
  Output env = run(cli() + " env --format json");
  ASSERT_EQ(env.status, 0) << env.out;
  EXPECT_NE(env.out.find("\"version\""), std::string::npos) << env.out;
  Output md = run(cli() + " env --format md");
  EXPECT_EQ(md.out.rfind("| version | nvcc |\n| --- | --- |\n", 0), 0u) << md.out;
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
