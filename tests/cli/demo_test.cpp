// `lane-tune demo`, the README's main job: a synthesized checkpoint tuned end to end by a local coordinator and a
// replaying worker into a SQLite file that holds the best configuration.
#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.hpp"

namespace lt::test {

TEST(Demo, TunesASynthesizedCheckpointIntoADatabase) {
  TempDir dir;
  Output r = run(cli() + " demo --replay-only --dir " + (dir / "demo").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("best on h200"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "demo" / "lane-tune.db"));
  Output q = run("sqlite3 " + (dir / "demo" / "lane-tune.db").string() + " 'select count(*) from best_configs'");
  ASSERT_EQ(q.status, 0) << q.out;  // scripts/setup.sh installs sqlite3
  EXPECT_EQ(q.out, "1\n");
}

// Where neither a GPU nor a recording of a real job is at hand (an installed binary: the fixture's path is the source
// tree's), the demo answers from a synthetic recording, which holds no runs, and says so.
TEST(Demo, WithoutARecordingAnswersFromASyntheticOneAndSaysSo) {
  TempDir dir;
  Output r = run(cli() + " demo --replay-only --replay '' --budget 8 --dir " + (dir / "demo").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("SYNTHETIC recording"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("best on h200"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("exception"), std::string::npos) << r.out;
  // A file that is not a recording is a clear error, not a crash.
  std::ofstream(dir / "bad.json") << "{\"format\": \"lane-tune-results\", \"runs\": []}";
  Output bad = run(cli() + " demo --replay-only --replay " + (dir / "bad.json").string() + " --dir " +
                   (dir / "demo2").string());
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("names no GPU kind"), std::string::npos) << bad.out;
}

}  // namespace lt::test
