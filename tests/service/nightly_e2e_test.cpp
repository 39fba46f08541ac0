// End to end on loopback with the replay runner: tune, export the winner (manifest, README, refusals), and nightly
// runs that pass on the same figures and fail when a worker's recording is slower or changes the logits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cluster.hpp"
#include "compiler/version.hpp"

namespace lt::test {
namespace {

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// The cluster's recording with every run changed by `change`, written to `name`.
std::filesystem::path altered_recording(Cluster& c, const std::string& name,
                                        const std::function<void(nlohmann::json&)>& change) {
  // The tuning job's runs as the synthetic recording answered them (the release's configuration among them).
  const auto job = c.path("job1.json");
  auto rec = c.cli("record --job 1 -o " + job.string());
  EXPECT_EQ(rec.status, 0) << rec.out;
  auto j = read_json(job);
  for (auto& r : j["runs"]) change(r);
  auto path = c.path(name);
  std::ofstream(path) << j.dump();
  return path;
}

// A replay worker answering from `recording`.
std::unique_ptr<Process> replay_worker(Cluster& c, const std::string& name, const std::filesystem::path& recording) {
  return std::make_unique<Process>(
      std::vector<std::string>{cli(), "worker", "--coordinator", c.address(), "--replay", recording.string(),
                               "--replay-delay", "5", "--name", name, "--cache", c.path("cache-" + name).string()},
      c.path("worker-" + name + ".log"));
}

TEST(NightlyEndToEnd, ExportRefusesAJobWithoutAValidConfigurationAndANonEmptyDirectory) {
  Cluster c;
  c.start_coordinator();
  int64_t job = c.submit("--gpus h200 --strategy random --budget 3");
  c.cli("cancel " + std::to_string(job));
  auto out = c.path("release");
  auto none = c.cli("export " + std::to_string(job) + " --gpu h200 -o " + out.string());
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.out.find("FAILED_PRECONDITION"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("no valid configuration for h200"), std::string::npos) << none.out;
  EXPECT_FALSE(std::filesystem::exists(out / "manifest.json"));

  auto kind = c.cli("export " + std::to_string(job) + " --gpu a100 -o " + out.string());
  EXPECT_NE(kind.out.find("did not tune for a100"), std::string::npos) << kind.out;
  auto missing = c.cli("export 42 --gpu h200 -o " + out.string());
  EXPECT_NE(missing.out.find("NOT_FOUND"), std::string::npos) << missing.out;

  std::filesystem::create_directories(out);
  std::ofstream(out / "keep.txt") << "mine";
  auto full = c.cli("export " + std::to_string(job) + " --gpu h200 -o " + out.string());
  EXPECT_NE(full.status, 0);
  EXPECT_NE(full.out.find("is not empty; pass --force"), std::string::npos) << full.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM releases"), 0);
}

TEST(NightlyEndToEnd, TuneExportNightlyPassesThenSlowerOrWrongFails) {
  Cluster c;
  c.start_coordinator();
  auto worker = replay_worker(c, "a", c.path("recording.json"));
  auto tuned = c.cli("submit " + c.checkpoint().string() + " --gpus h200 --strategy random --budget 4 --wait");
  ASSERT_EQ(tuned.status, 0) << tuned.out;

  auto out = c.path("release");
  // The binary is built where nvcc is (CI); elsewhere the release holds the sources only.
  bool nvcc = !lt::nvcc_path().empty() && access(lt::nvcc_path().c_str(), X_OK) == 0;
  auto ex = c.cli("export 1 --gpu h200 -o " + out.string() + (nvcc ? "" : " --no-build"));
  ASSERT_EQ(ex.status, 0) << ex.out;
  EXPECT_NE(ex.out.find("release 1"), std::string::npos) << ex.out;
  for (auto f : {"lane.cu", "lane_host.cu", "lane.sidecar", "lane.json", "prompts.txt", "README.md", "manifest.json"})
    EXPECT_TRUE(std::filesystem::exists(out / f)) << f;
  auto m = read_json(out / "manifest.json");
  EXPECT_EQ(m["format"], "lane-tune-release");
  EXPECT_EQ(m["release"], 1);
  EXPECT_EQ(m["gpu"], "h200");
  EXPECT_EQ(m["arch"], "sm_90");
  EXPECT_EQ(m["checkpoint"]["size"], std::filesystem::file_size(c.checkpoint()));
  EXPECT_EQ(m["checkpoint"]["digest"].get<std::string>().size(), 32u);
  EXPECT_FALSE(m["checkpoint"]["name"].get<std::string>().empty());
  EXPECT_TRUE(m["knobs"].is_object() && !m["knobs"].empty());
  EXPECT_GT(m["measured"]["median_ms_per_token"].get<double>(), 0);
  EXPECT_TRUE(m["measured"].contains("spread_ms"));
  EXPECT_GT(m["measured"]["repetitions"].get<int>(), 0);
  EXPECT_EQ(m["reference"]["logits_hash"].get<std::string>().size(), 16u);
  EXPECT_TRUE(m["environment"].is_object());
  EXPECT_EQ(m["lane_tune"], lt::version());
  EXPECT_FALSE(m["exported_at"].get<std::string>().empty());
  EXPECT_EQ(m["files"]["runtime"], "lane_host.cu");
  if (!nvcc) {
    EXPECT_TRUE(m["files"]["binary"].is_null());
  } else {
    EXPECT_EQ(m["files"]["binary"], "lane");
    EXPECT_TRUE(std::filesystem::exists(out / "lane"));
  }
  std::ifstream readme(out / "README.md");
  std::string text((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  auto file = m["checkpoint"]["file"].get<std::string>();
  EXPECT_EQ(std::filesystem::file_size(file), std::filesystem::file_size(c.checkpoint()));
  EXPECT_NE(text.find("./lane " + file + " lane.sidecar --prompts prompts.txt"), std::string::npos) << text;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM releases WHERE job = 1 AND gpu = 'h200'"), 1);

  auto same = c.cli("nightly --gpus h200");
  EXPECT_EQ(same.status, 0) << same.out;
  EXPECT_NE(same.out.find("same"), std::string::npos) << same.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM nightly_runs WHERE night = 1 AND verdict = 'same'"), 1);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs r JOIN nightly_runs n ON n.job = r.job WHERE r.reused_from != 0"), 0);

  worker->signal(SIGKILL);
  worker->wait(30);
  worker = replay_worker(c, "slow", altered_recording(c, "slow.json", [](nlohmann::json& r) {
                           r["median_ms"] = r["median_ms"].get<double>() * 1.5;
                         }));
  auto slower = c.cli("nightly --json");
  EXPECT_EQ(slower.status, 5) << slower.out;  // a regression
  auto j = nlohmann::json::parse(slower.out.substr(slower.out.find('{')));
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["rows"][0]["verdict"], "slower");
  EXPECT_NEAR(j["rows"][0]["change_pct"].get<double>(), 50, 1e-6);

  worker->signal(SIGKILL);
  worker->wait(30);
  worker = replay_worker(
      c, "wrong", altered_recording(c, "wrong.json", [](nlohmann::json& r) { r["logits_hash"] = "0123456789abcdef"; }));
  auto wrong = c.cli("nightly");
  EXPECT_EQ(wrong.status, 5) << wrong.out;
  EXPECT_NE(wrong.out.find("wrong"), std::string::npos) << wrong.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM nightly_runs"), 3);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM release_history WHERE verdict IN ('slower', 'wrong')"), 2);
}

TEST(NightlyEndToEnd, NoWorkerOfTheKindFailsTheNightAfterItsTimeout) {
  Cluster c;
  c.start_coordinator();
  auto worker = replay_worker(c, "a", c.path("recording.json"));
  ASSERT_EQ(c.cli("submit " + c.checkpoint().string() + " --gpus h200 --strategy random --budget 2 --wait").status, 0);
  auto rel = " --gpu h200 --no-build -o " + c.path("rel").string();
  ASSERT_EQ(c.cli("export 1" + rel).status, 0);
  auto again = c.cli("export 1" + rel);
  EXPECT_NE(again.status, 0);
  EXPECT_NE(again.out.find("pass --force"), std::string::npos) << again.out;
  auto forced = c.cli("export 1 --force" + rel);
  EXPECT_EQ(forced.status, 0) << forced.out;
  EXPECT_EQ(read_json(c.path("rel") / "manifest.json")["release"], 2);
  EXPECT_TRUE(read_json(c.path("rel") / "manifest.json")["files"]["binary"].is_null());
  auto list = c.cli("releases");
  EXPECT_EQ(list.status, 0) << list.out;
  EXPECT_NE(list.out.find(c.path("rel").string()), std::string::npos) << list.out;
  worker->signal(SIGKILL);
  worker->wait(30);
  auto r = c.cli("nightly --timeout 2s");
  EXPECT_EQ(r.status, 5) << r.out;
  EXPECT_NE(r.out.find("failed"), std::string::npos) << r.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM nightly_runs WHERE verdict = 'failed'"), 2);
}

// A mixture (gpt-oss with MXFP4 experts) through the same service, unchanged: tuned over its own space (the expert
// tile among its knobs) to a verified best whose knobs compile, exported with the lane's sources, and judged nightly.
TEST(NightlyEndToEnd, AMixtureIsTunedExportedAndJudgedNightlyLikeAnyModel) {
  Cluster c("", "mxfp4", "tiny-gpt-oss");
  c.start_coordinator();
  auto space = run(cli() + " knobs " + c.checkpoint().string() + " --json");
  ASSERT_EQ(space.status, 0) << space.out;
  EXPECT_NE(space.out.find("\"moe_tile\""), std::string::npos);
  auto worker = replay_worker(c, "a", c.path("recording.json"));
  auto tuned = c.cli("submit " + c.checkpoint().string() + " --gpus h200 --strategy random --budget 4 --wait");
  ASSERT_EQ(tuned.status, 0) << tuned.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE job = 1 AND state != 'done'"), 0);
  ASSERT_EQ(c.cli("best 1 --gpu h200 --knobs " + c.path("best.json").string()).status, 0);
  const nlohmann::json winner = read_json(c.path("best.json"));
  EXPECT_TRUE(winner.contains("moe_tile")) << winner.dump();
  auto lane = run(cli() + " compile " + c.checkpoint().string() + " --knobs " + c.path("best.json").string() + " -o " +
                  c.path("lane").string());
  ASSERT_EQ(lane.status, 0) << lane.out;
  EXPECT_EQ(read_json(c.path("lane") / "lane.json")["knobs"], winner);
  auto ex = c.cli("export 1 --gpu h200 --no-build -o " + c.path("release").string());
  ASSERT_EQ(ex.status, 0) << ex.out;
  const auto m = read_json(c.path("release") / "manifest.json");
  EXPECT_EQ(m["knobs"], winner);
  EXPECT_EQ(m["checkpoint"]["size"], std::filesystem::file_size(c.checkpoint()));
  EXPECT_TRUE(std::filesystem::exists(c.path("release") / "lane.cu"));
  auto night = c.cli("nightly --gpus h200");
  EXPECT_EQ(night.status, 0) << night.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM nightly_runs WHERE verdict = 'same'"), 1);
}

}  // namespace
}  // namespace lt::test
