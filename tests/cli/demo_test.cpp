// `lane-tune demo`, the README's main job: a synthesized checkpoint tuned end to end by a local coordinator and a
// replaying worker into a SQLite file that holds the best configuration.
#include <gtest/gtest.h>

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

}  // namespace lt::test
