// The report's data and page: a point per configuration, a strip per knob that varies, the search's progress with a
// best-so-far that never rises, the winner's profile by kind with shares that add up, nights per release; and a page
// in which no value can close a script or add markup.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace lt::test {
namespace {

using nlohmann::json;

db::Run run(int64_t id, int64_t config, const json& knobs, double objective_ms, double recorded_at) {
  db::Run r;
  r.id = id;
  r.config = config;
  r.gpu = "h200";
  r.knobs = knobs.dump();
  r.valid = true;
  r.verified = true;
  r.median_ms = r.objective_ms = objective_ms;
  r.tok_per_s = 1000 / objective_ms;
  r.prefill_tok_s = 5000 / objective_ms;
  r.recorded_at = recorded_at;
  return r;
}

// A finished job on h200: configurations 1..3 (config 2 the winner, with a profile; config 3 screened then
// verified), a failed run, a replayed and a reused one, and a release with two nights.
cli::ReportInput job() {
  cli::ReportInput in;
  in.status.job.id = 7;
  in.status.job.gpus = {"h200"};
  in.status.job.checkpoint = std::string(32, 'c');
  in.status.job.created_at = 1000;
  in.status.checkpoint_name = "tiny";
  in.runs = {
      run(1, 1, {{"rows", 4}, {"graphs", true}}, 3.0, 1010), run(2, 2, {{"rows", 8}, {"graphs", true}}, 1.0, 1020),
      run(3, 3, {{"rows", 16}, {"graphs", true}}, 2.5, 1005), run(4, 3, {{"rows", 16}, {"graphs", true}}, 2.0, 1030),
      run(5, 4, {{"rows", 32}, {"graphs", true}}, 0.5, 1040)};
  in.runs[2].verified = false;  // config 3's screen, then its verification (run 4) stands for it
  in.runs[4].valid = false;     // the fastest, but wrong
  in.runs[4].failure = "wrong_results";
  in.runs[0].reused_from = 99;
  in.runs[1].environment = R"({"replay": true})";
  in.runs[1].profile = json{{"launches",
                             {{{"rows", 1}, {"kind", "gemv"}, {"us", 30.0}},
                              {{"rows", 1}, {"kind", "gemv"}, {"us", 30.0}},
                              {{"rows", 1}, {"kind", "attention"}, {"us", 40.0}},
                              {{"rows", 16}, {"kind", "gemm"}, {"us", 90.0}},
                              {{"rows", 16}, {"kind", "attention"}, {"us", 10.0}}}}}
                           .dump();
  in.winners = {in.runs[1]};
  db::NightRow n1, n2;
  n1.release = n2.release = 1;
  n1.gpu = n2.gpu = "h200";
  n1.baseline_ms = n2.baseline_ms = 1.0;
  n1.night = 1;
  n1.median_ms = 1.01;
  n1.verdict = "same";
  n2.night = 2;  // still pending
  in.nights = {n1, n2};
  return in;
}

// The charts of `type`.
std::vector<json> charts(const json& data, const std::string& type) {
  std::vector<json> v;
  for (const auto& c : data["charts"])
    if (c["type"] == type) v.push_back(c);
  return v;
}

TEST(Report, HeaderCountsEveryKindOfRunAndNamesTheWinner) {
  const json d = cli::report_data(job());
  EXPECT_EQ(d["job"]["checkpoint_name"], "tiny");
  ASSERT_EQ(d["kinds"].size(), 1u);
  const json& c = d["kinds"][0]["counts"];
  EXPECT_EQ(c["runs"], 5);
  EXPECT_EQ(c["verified"], 3);
  EXPECT_EQ(c["screened"], 1);
  EXPECT_EQ(c["invalid"], 1);
  EXPECT_EQ(c["reused"], 1);
  EXPECT_EQ(c["replayed"], 1);
  EXPECT_EQ(d["kinds"][0]["best"]["config"], 2);
  EXPECT_EQ(d["kinds"][0]["best"]["knobs"]["rows"], 8);
}

// One point per configuration with a valid run (config 4 failed), config 3 by its verification; a strip for the knob
// that varies (rows), none for the one that does not (graphs).
TEST(Report, APointPerValidConfigurationAndAStripPerVaryingKnob) {
  const json d = cli::report_data(job());
  const auto scatter = charts(d, "configurations");
  ASSERT_EQ(scatter.size(), 1u);
  std::map<int64_t, json> by_config;
  for (const auto& p : scatter[0]["points"]) by_config[p["config"].get<int64_t>()] = p;
  ASSERT_EQ(by_config.size(), 3u);
  EXPECT_EQ(by_config[3]["run"], 4);
  EXPECT_EQ(by_config[3]["verdict"], "verified");
  EXPECT_TRUE(by_config[2]["best"].get<bool>());
  EXPECT_DOUBLE_EQ(by_config[2]["x"].get<double>(), 1000.0);  // decode tok/s
  EXPECT_DOUBLE_EQ(by_config[2]["y"].get<double>(), 5000.0);  // prefill tok/s
  EXPECT_EQ(by_config[1]["knobs"], "rows=4");                 // against the winner's
  const auto strips = charts(d, "knob");
  ASSERT_EQ(strips.size(), 1u);
  EXPECT_EQ(strips[0]["knob"], "rows");
  EXPECT_EQ(strips[0]["values"], json({"4", "8", "16"}));
  EXPECT_EQ(strips[0]["points"].size(), 3u);
}

// Every valid measurement in the order recorded; the best verified objective so far steps down only, from the first
// verified run to the last measurement's time.
TEST(Report, ProgressIsEveryValidMeasurementAndABestSoFarThatNeverRises) {
  const auto progress = charts(cli::report_data(job()), "progress");
  ASSERT_EQ(progress.size(), 1u);
  const json& p = progress[0];
  EXPECT_EQ(p["runs"], 5);
  ASSERT_EQ(p["measurements"].size(), 4u);  // not the failed run
  std::vector<double> xs;
  for (const auto& m : p["measurements"]) xs.push_back(m["x"].get<double>());
  EXPECT_TRUE(std::is_sorted(xs.begin(), xs.end()));
  EXPECT_DOUBLE_EQ(xs.front(), 5.0);  // seconds since the submit
  const json& best = p["best"];
  ASSERT_GE(best.size(), 2u);
  EXPECT_DOUBLE_EQ(best[0]["y"].get<double>(), 3.0);  // run 1 at 10 s (run 3 at 5 s was a screen)
  for (size_t i = 1; i < best.size(); ++i) EXPECT_LE(best[i]["y"].get<double>(), best[i - 1]["y"].get<double>());
  EXPECT_DOUBLE_EQ(best.back()["y"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(best.back()["x"].get<double>(), 40.0);  // to the last measurement, the failed one's time
  const json& valid = p["best_valid"];                     // screens too: run 3's 2.5 at 5 s first
  ASSERT_GE(valid.size(), 2u);
  EXPECT_DOUBLE_EQ(valid[0]["x"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(valid[0]["y"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(valid.back()["y"].get<double>(), 1.0);
}

// The winner's launches by kind per form: the decode step first, kinds by their share of it; shares add up to 1.
TEST(Report, ProfileBreaksEachFormDownByKindWithSharesThatAddUp) {
  const auto profile = charts(cli::report_data(job()), "profile");
  ASSERT_EQ(profile.size(), 1u);
  const json& p = profile[0];
  ASSERT_EQ(p["forms"].size(), 2u);
  EXPECT_EQ(p["forms"][0]["label"], "decode step");
  EXPECT_DOUBLE_EQ(p["forms"][0]["total_us"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(p["forms"][1]["total_us"].get<double>(), 100.0);
  ASSERT_EQ(p["kinds"].size(), 3u);
  EXPECT_EQ(p["kinds"][0]["kind"], "gemv");  // 60 us of the decode step
  EXPECT_EQ(p["kinds"][0]["launches"][0], 2);
  EXPECT_DOUBLE_EQ(p["kinds"][0]["share"][0].get<double>(), 0.6);
  for (size_t f = 0; f < 2; ++f) {
    double sum = 0;
    for (const auto& k : p["kinds"]) sum += k["share"][f].get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-12) << "form " << f;
  }
}

// A winner measured without --profile (successive halving profiles its screens only) is profiled by its
// configuration's latest run that was.
TEST(Report, AWinnerWithoutAProfileIsProfiledByItsConfigurationsScreen) {
  auto in = job();
  db::Run screen = in.runs[1];
  screen.id = 6;
  screen.verified = false;
  in.runs.push_back(screen);
  in.runs[1].profile = R"({"total_us": 100})";
  in.winners = {in.runs[1]};
  auto profile = charts(cli::report_data(in), "profile");
  ASSERT_EQ(profile.size(), 1u);
  EXPECT_EQ(profile[0]["run"], 6);
  EXPECT_EQ(profile[0]["config"], 2);
  in.runs.back().profile = "{}";
  EXPECT_TRUE(charts(cli::report_data(in), "profile").empty());
}

TEST(Report, NightsPerReleaseAndNoneWithoutReleases) {
  auto in = job();
  auto nightly = charts(cli::report_data(in), "nightly");
  ASSERT_EQ(nightly.size(), 1u);
  EXPECT_EQ(nightly[0]["release"], 1);
  ASSERT_EQ(nightly[0]["nights"].size(), 2u);
  EXPECT_DOUBLE_EQ(nightly[0]["nights"][0]["median_ms"].get<double>(), 1.01);
  EXPECT_TRUE(nightly[0]["nights"][1]["median_ms"].is_null());  // pending
  in.nights.clear();
  EXPECT_TRUE(charts(cli::report_data(in), "nightly").empty());
  in.winners.clear();
  EXPECT_TRUE(charts(cli::report_data(in), "profile").empty());
}

TEST(Report, ScriptJsonCannotCloseItsElement) {
  const std::string s = cli::script_json({{"v", "</script><b>&"}});
  EXPECT_EQ(s.find('<'), std::string::npos) << s;
  EXPECT_EQ(s.find('>'), std::string::npos) << s;
  EXPECT_EQ(s.find('&'), std::string::npos) << s;
  EXPECT_EQ(json::parse(s)["v"], "</script><b>&");  // the same value once parsed
  EXPECT_EQ(cli::html_escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
}

// A value that tries to close the data's script or add markup stays text: the page's script elements are exactly the
// template's, each chart has its canvas, and nothing is fetched from elsewhere.
TEST(Report, PageEscapesEveryValueAndNeedsNothingFromElsewhere) {
  if (!cli::report_available()) GTEST_SKIP() << "built without Chart.js (Debian's libjs-chart.js)";
  auto in = job();
  const std::string evil = "</script><script>alert(1)</script><!--";
  in.status.job.message = evil;
  in.status.checkpoint_name = evil;
  in.runs[1].knobs = json{{"rows", 8}, {"graphs", evil}}.dump();
  in.winners = {in.runs[1]};
  const json data = cli::report_data(in);
  const std::string page = cli::report_page(data);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  const std::regex open_script("<script[ >]", std::regex::icase), close_script("</script", std::regex::icase);
  const auto count = [&](const std::regex& r) {
    return std::distance(std::sregex_iterator(page.begin(), page.end(), r), std::sregex_iterator());
  };
  EXPECT_EQ(count(open_script), 3);  // the data, Chart.js, the drawing script
  EXPECT_EQ(count(close_script), 3);
  for (const auto& c : data["charts"])
    EXPECT_NE(page.find("<canvas id=\"" + c["id"].get<std::string>() + "\">"), std::string::npos) << c["id"];
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_NE(page.find("Released under the MIT License"), std::string::npos);  // Chart.js's licence
  // The data reads back whole from its element.
  const size_t from = page.find("id=\"lt-data\">") + 13, to = page.find("</script>", from);
  EXPECT_EQ(json::parse(page.substr(from, to - from)), data);
}

}  // namespace
}  // namespace lt::test
