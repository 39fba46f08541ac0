// End to end on loopback: a job tuned by a replay worker, exported and re-measured by a night, then `report` writes
// its page and headless Chromium draws every plot of it offline; `history` and `compare` answer through the same
// coordinator, with its token, leaving replayed and nightly runs out.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cluster.hpp"

namespace lt::test {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The headless Chromium here: Debian's chromium-headless-shell, else chromium; empty when there is none.
std::string chromium() {
  for (const char* name : {"chromium-headless-shell", "chromium"}) {
    Output r = run(std::string("command -v ") + name);
    if (r.status == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return "";
}

// Text as the DOM serializer writes it, read back: &amp; &lt; &gt; &quot; and &nbsp; undone.
std::string unescape(std::string s) {
  for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&nbsp;", " "}, {"&amp;", "&"}})
    for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += std::string_view(to).size())
      s.replace(at, std::string_view(from).size(), to);
  return s;
}

// What the page says it drew (#lt-drawn, written by its script once every chart is made), from the DOM that headless
// Chromium dumps after running the page's scripts, offline (every host name unresolvable) and within a time limit.
nlohmann::json drawn(const std::string& browser, const std::filesystem::path& page, const std::filesystem::path& dir) {
  const std::filesystem::path log = dir / "chromium.log";
  Output r = run("(timeout 120 " + browser +
                 " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --user-data-dir=" +
                 (dir / "chromium-profile").string() +
                 " --host-resolver-rules='MAP * ~NOTFOUND' --virtual-time-budget=20000 --dump-dom file://" +
                 page.string() + " 2>" + log.string() + ")");
  EXPECT_EQ(r.status, 0) << read_file(log);
  const size_t element = r.out.find("id=\"lt-drawn\"");
  if (element == std::string::npos) {
    ADD_FAILURE() << "no #lt-drawn in the DOM:\n" << r.out.substr(0, 2000) << "\n" << read_file(log);
    return nullptr;
  }
  const size_t from = r.out.find('>', element) + 1, to = r.out.find("</pre>", from);
  const auto status = nlohmann::json::parse(unescape(r.out.substr(from, to - from)), nullptr, false);
  EXPECT_FALSE(status.is_discarded()) << r.out.substr(from, to - from);
  return status;
}

// A replay worker answering from the lane landscape: a synthetic recording whose runs time launches by kind as the
// CUDA runner's profiles do (the cluster's own recording profiles totals only).
std::unique_ptr<Process> lane_worker(Cluster& c, const std::string& token) {
  const auto recording = c.path("lane.json");
  auto r = run(cli() + " record --synthetic " + c.checkpoint().string() + " --gpu h200 --landscape lane -o " +
               recording.string());
  EXPECT_EQ(r.status, 0) << r.out;
  return std::make_unique<Process>(
      std::vector<std::string>{cli(), "worker", "--coordinator", c.address(), "--token", token, "--replay",
                               recording.string(), "--replay-delay", "5", "--name", "lane", "--cache",
                               c.path("cache-lane").string()},
      c.path("worker-lane.log"));
}

// Submits the cluster's checkpoint for h200 with `args` and waits until the job ends.
void tune(Cluster& c, const std::string& args) {
  auto r = c.cli("submit " + c.checkpoint().string() + " --gpus h200 " + args + " --wait");
  ASSERT_EQ(r.status, 0) << r.out;
}

TEST(ReportEndToEnd, EveryPlotOfAJobsPageDrawsInHeadlessChromiumOffline) {
  Cluster c("report-token");
  c.start_coordinator();
  const auto worker = lane_worker(c, "report-token");
  tune(c, "--strategy halving --budget 12");
  auto ex = c.cli("export 1 --gpu h200 --no-build -o " + c.path("release").string());
  ASSERT_EQ(ex.status, 0) << ex.out;
  auto night = c.cli("nightly --gpus h200");
  ASSERT_EQ(night.status, 0) << night.out;

  const auto page = c.path("report.html");
  auto refused = c.cli("report 1 -o " + page.string(), false);  // without the token
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.out.find("UNAUTHENTICATED"), std::string::npos) << refused.out;
  EXPECT_FALSE(std::filesystem::exists(page));
  EXPECT_EQ(c.cli("report 42 -o " + page.string()).status, 3);  // no such job
  auto r = c.cli("report 1 -o " + page.string());
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string html = read_file(page);
  // Every chart type has a canvas: the configurations, a knob's strip, the progress, the profile, the night.
  for (const char* section : {"each configuration&#39;s decode and prefill", "the objective by ", "progress",
                              "launches by kind", "nightly runs"})
    EXPECT_NE(html.find(section), std::string::npos) << section;

  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "no headless Chromium (Debian: apt-get install chromium-headless-shell)";
  const auto status = drawn(browser, page, c.path(""));
  ASSERT_TRUE(status.is_object());
  size_t canvases = 0;
  for (size_t at = 0; (at = html.find("<canvas id=", at)) != std::string::npos; ++at) ++canvases;
  EXPECT_GE(canvases, 5u);
  EXPECT_EQ(status["expected"], canvases);
  EXPECT_EQ(status["charts"].size(), canvases);
  EXPECT_TRUE(status["errors"].empty()) << status.dump(1);
  EXPECT_EQ(status["resources"], 0) << "the page fetched something";
  std::set<std::string> types;
  for (const auto& [id, chart] : status["charts"].items()) {
    EXPECT_FALSE(chart.contains("error")) << id << ": " << chart.dump();
    EXPECT_GT(chart["points"].get<int>(), 0) << id << ": " << chart.dump();
    EXPECT_GT(chart["inked"].get<int>(), 0) << id << " drew nothing: " << chart.dump();
    types.insert(chart["type"].get<std::string>());
  }
  EXPECT_EQ(types, (std::set<std::string>{"configurations", "knob", "progress", "profile", "nightly"}));
}

// Two jobs answered from a recording: history lists both (not the night's), every run counted replayed and no best of
// their own; compare picks the earlier job and pairs nothing, and says why.
TEST(HistoryEndToEnd, HistoryAndCompareLeaveReplayedAndNightlyRunsOut) {
  Cluster c("history-token");
  c.start_coordinator();
  c.start_worker("a", 5);
  tune(c, "--strategy random --budget 4");
  ASSERT_EQ(c.cli("export 1 --gpu h200 --no-build -o " + c.path("release").string()).status, 0);
  ASSERT_EQ(c.cli("nightly --gpus h200").status, 0);
  tune(c, "--strategy random --budget 4 --seed 9");

  auto h = c.cli("history --format json --gpu H200 --checkpoint " + c.checkpoint().string());
  ASSERT_EQ(h.status, 0) << h.out;
  const auto rows = nlohmann::json::parse(h.out);
  ASSERT_EQ(rows.size(), 2u) << h.out;  // job 2 re-measured the release: a night's job, not listed
  EXPECT_EQ(rows[0]["job"], 1);
  EXPECT_EQ(rows[1]["job"], 3);
  for (const auto& row : rows) {
    EXPECT_EQ(row["replayed"], row["runs"]);
    EXPECT_EQ(row["measured"], 0);
    EXPECT_TRUE(row["best_objective_ms"].is_null());
  }
  EXPECT_EQ(c.cli("history --checkpoint nothex").status, 2);  // a usage error
  EXPECT_NE(c.cli("history", false).out.find("UNAUTHENTICATED"), std::string::npos);

  auto cmp = c.cli("compare 3 --format json");
  ASSERT_EQ(cmp.status, 0) << cmp.out;
  const auto compared = nlohmann::json::parse(cmp.out);
  ASSERT_EQ(compared.size(), 1u);  // the best row only: nothing either job measured itself
  EXPECT_EQ(compared[0]["row"], "best");
  EXPECT_TRUE(compared[0]["objective_ms"].is_null());
  EXPECT_EQ(compared[0]["replayed_left_out"], rows[1]["runs"]);
  auto table = c.cli("compare 3");
  EXPECT_NE(table.out.find("job 3 against job 1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("replayed"), std::string::npos) << table.out;
  auto nightly = c.cli("compare 3 --against 2");
  EXPECT_NE(nightly.status, 0);
  EXPECT_NE(nightly.out.find("nightly run of a release"), std::string::npos) << nightly.out;
  EXPECT_EQ(c.cli("compare 1").status, 3);  // nothing before it: not found
}

}  // namespace
}  // namespace lt::test
