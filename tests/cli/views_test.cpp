// The service's records as tables: the knobs people see are those that differ from the winner, flags say what was
// reused or replayed, programs get every figure unscaled, and a spread of 50 ns reads "50 ns".
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "compiler/knobs.hpp"
#include "output/views.hpp"

namespace lt::test {
namespace {

using namespace lt::cli;

// The cell of `row` under the column keyed `key` (each key names one column).
const Cell& cell(const Table& t, size_t row, const std::string& key) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].key == key) return t.rows.at(row).at(i);
  throw std::runtime_error("no column " + key);
}

db::Run run(int64_t id, const std::string& gpu, const nlohmann::json& knobs, bool verified, double decode_ms) {
  db::Run r;
  r.id = id;
  r.config = id + 100;
  r.gpu = gpu;
  r.knobs = knobs.dump();
  r.valid = true;
  r.verified = verified;
  r.median_ms = decode_ms;
  r.spread_ms = 0.00005;
  r.objective_ms = decode_ms;
  r.repetitions = 5;
  return r;
}

// Each column's key is one column's: JSON's members and CSV's headers are unambiguous.
TEST(Views, EveryColumnKeyIsDistinct) {
  coord::JobStatus job;
  coord::Night night;
  for (const Table& t : {jobs_table({job}), results_table({}, {}), best_table({}), workers_table({}),
                         releases_table({}), night_table(night), history_table({}), compare_table({})}) {
    std::set<std::string> keys;
    for (const auto& c : t.columns) EXPECT_TRUE(keys.insert(c.key).second) << c.key;
  }
}

TEST(Views, KnobChangesNameWhatDiffers) {
  const nlohmann::json ref = {{"a", 1}, {"b", "x"}, {"c", true}};
  EXPECT_EQ(knob_changes({{"a", 1}, {"b", "x"}, {"c", true}}, ref), "");
  EXPECT_EQ(knob_changes({{"a", 2}, {"b", "y"}, {"c", true}}, ref), "a=2 b=y");
  EXPECT_EQ(knob_changes({{"a", 1}, {"d", 4}}, ref), "d=4");
}

// People see each run's knobs against its GPU kind's winner (the winner itself marked), the verdict, the flags
// (reused, replayed, cut off) and the figures scaled; programs see every knob and the figures as numbers.
TEST(Views, ResultsShowTheKnobsThatDifferFromTheWinner) {
  const nlohmann::json best = {{"gemv", 4}, {"attn", "flash"}, {"int8", false}};
  db::Run winner = run(7, "h200", best, true, 2.91);
  db::Run other = run(8, "h200", {{"gemv", 8}, {"attn", "flash"}, {"int8", true}}, false, 3.5);
  other.reused_from = 3;
  other.environment = R"({"replay": true})";
  other.cost = R"({"cutoff_ms": 4.0})";
  db::Run failed = run(9, "h200", best, false, 0);
  failed.valid = false;
  failed.failure = "wrong_results";
  failed.reason = "rel_l2 0.3 > 0.01";
  db::Run a100 = run(10, "a100", {{"gemv", 2}, {"attn", "flash"}, {"int8", false}}, false, 5);
  db::Run a100_b = run(11, "a100", {{"gemv", 2}, {"attn", "plain"}, {"int8", false}}, false, 6);
  const Table t = results_table({winner, other, failed, a100, a100_b}, {winner});
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(cell(t, 0, "knob_changes").text, "(the winner)");
  EXPECT_EQ(cell(t, 1, "knob_changes").text, "gemv=8 int8=true");
  EXPECT_EQ(cell(t, 2, "knob_changes").text, "(the same knobs)");
  // A kind without a winner is compared with its first run listed.
  EXPECT_EQ(cell(t, 3, "knob_changes").text, "(first listed)");
  EXPECT_EQ(cell(t, 4, "knob_changes").text, "attn=plain");
  EXPECT_EQ(*cell(t, 1, "knobs").value, nlohmann::json::parse(other.knobs));

  EXPECT_EQ(cell(t, 0, "verdict").text, "verified");
  EXPECT_EQ(cell(t, 1, "verdict").text, "screened");
  EXPECT_EQ(cell(t, 2, "verdict").text, "failed");
  EXPECT_EQ(cell(t, 1, "flags").text, "reused,replayed,cut off");
  EXPECT_EQ(cell(t, 0, "flags").text, "");
  EXPECT_EQ(*cell(t, 1, "reused").value, true);
  EXPECT_EQ(*cell(t, 1, "reused_from").value, 3);
  EXPECT_EQ(*cell(t, 1, "replayed").value, true);
  EXPECT_EQ(*cell(t, 1, "cut_off").value, true);
  EXPECT_EQ(*cell(t, 0, "replayed").value, false);
  EXPECT_EQ(cell(t, 1, "objective_ms").text, "~3.50 ms");
  EXPECT_EQ(*cell(t, 1, "objective_ms").value, 3.5);
  EXPECT_EQ(cell(t, 0, "decode_ms").text, "2.91 ms");
  EXPECT_EQ(cell(t, 0, "spread_ms").text, "50 ns");
  EXPECT_EQ(*cell(t, 0, "spread_ms").value, 0.00005);
  EXPECT_EQ(*cell(t, 0, "run").value, 7);
  EXPECT_EQ(*cell(t, 0, "config").value, 107);
  EXPECT_EQ(cell(t, 2, "failure_and_reason").text, "wrong_results: rel_l2 0.3 > 0.01");
  EXPECT_EQ(cell(t, 2, "failure").text, "wrong_results");
  EXPECT_EQ(cell(t, 2, "reason").text, "rel_l2 0.3 > 0.01");
  EXPECT_TRUE(cell(t, 2, "objective_ms").value->is_null());

  // Every format renders the same rows; the CSV has a record per run after its header.
  const std::string csv = render(t, Format::Csv);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6);
  EXPECT_EQ(nlohmann::json::parse(render(t, Format::Json)).size(), 5u);
  for (const std::string line : {"(the winner)", "gemv=8 int8=true", "wrong_results: rel_l2"})
    EXPECT_NE(render(t, Format::Table).find(line), std::string::npos) << line;
}

// No terminal line of the results grows with the knobs' JSON: a run of many changed knobs is cut.
TEST(Views, ResultsLinesStayNarrow) {
  nlohmann::json many, others;
  for (int i = 0; i < 40; ++i) {
    many["knob_number_" + std::to_string(i)] = i;
    others["knob_number_" + std::to_string(i)] = i + 1;
  }
  db::Run winner = run(1, "h200", many, true, 1);
  db::Run other = run(2, "h200", others, false, 2);
  other.valid = false;
  other.failure = "compile_error";
  other.reason = std::string(400, 'x');
  const std::string text = render(results_table({winner, other}, {winner}), Format::Table);
  size_t widest = 0, start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    widest = std::max(widest, end - start);
  EXPECT_LT(widest, 240u) << text;
}

TEST(Views, BestShowsTheKnobsThatDifferFromTheDefaults) {
  db::Run w = run(5, "h200", knobs::Knobs{}.to_json(), true, 1.25);
  const Table t = best_table({w});
  EXPECT_EQ(cell(t, 0, "knob_changes").text, "(the defaults)");
  EXPECT_EQ(cell(t, 0, "gpu").text, "h200");
  EXPECT_EQ(cell(t, 0, "decode_ms").text, "1.25 ms");
}

TEST(Views, WorkersShowStateAndLeases) {
  coord::WorkerStatus w;
  w.worker.id = 3;
  w.worker.name = "node1:0";
  w.worker.gpu = "h200";
  w.state = coord::WorkerState::Busy;
  w.leases = 2;
  w.seen_ago_s = 4;
  const Table t = workers_table({w});
  EXPECT_EQ(cell(t, 0, "state").text, "busy");
  EXPECT_EQ(*cell(t, 0, "leases").value, 2);
  EXPECT_EQ(cell(t, 0, "seen_ago_s").text, "4s ago");
  EXPECT_EQ(*cell(t, 0, "worker").value, 3);
}

// A job's row per GPU kind; figures only where a verified best exists; the share of the time spent measuring once
// something was; time left only under a time budget.
TEST(Views, JobsHaveARowPerGpuKind) {
  coord::JobStatus s;
  s.job.id = 4;
  s.job.state = "running";
  s.job.checkpoint = "44959fc784054d274ade2dc51524e8f1";
  db::Progress h200, a100;
  h200.gpu = "h200";
  h200.planned = 1378560;
  h200.measured = 42;
  h200.best_ms = 2.91;
  h200.best_prefill_tok_s = 6300;
  h200.measuring = 0.834;
  a100.gpu = "a100";
  s.gpus = {h200, a100};
  const Table t = jobs_table({s});
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(cell(t, 0, "planned").text, "1,378,560");
  EXPECT_EQ(cell(t, 0, "best_decode_ms").text, "2.91 ms");
  EXPECT_EQ(cell(t, 0, "best_prefill_tok_s").text, "6,300 tok/s");
  EXPECT_EQ(cell(t, 1, "best_decode_ms").text, "-");
  EXPECT_EQ(cell(t, 0, "checkpoint").text, "44959fc78405");
  EXPECT_EQ(*cell(t, 0, "checkpoint").value, s.job.checkpoint);
  EXPECT_TRUE(cell(t, 0, "time_left_s").value->is_null());
  EXPECT_NE(progress_line(s).find("h200 measured 42 / 1,378,560 planned"), std::string::npos) << progress_line(s);
  EXPECT_EQ(cell(t, 0, "measuring").text, "83%");
  EXPECT_EQ(cell(t, 1, "measuring").text, "-");  // nothing measured
  EXPECT_NE(progress_line(s).find("measuring 83% of the time"), std::string::npos) << progress_line(s);
  EXPECT_EQ(progress_line(s).find("a100 measured 0 / 0 planned, 0 verified, measuring"), std::string::npos);
}

// A job's history row: its best against the previous job's on the same checkpoint, GPU kind and objective (another
// kind, or a job without a best of its own, does not count).
TEST(Views, HistoryChangeIsAgainstThePreviousJobOfTheSameCheckpointKindAndObjective) {
  auto row = [](int64_t job, const std::string& gpu, double best_ms) {
    db::HistoryRow h;
    h.job = job;
    h.gpu = gpu;
    h.checkpoint = std::string(32, 'a');
    h.objective = "decode";
    h.runs = h.measured = 3;
    if (best_ms > 0) h.best = db::Figures{job * 10, job * 10, "k", "{\"a\": 1}", true, best_ms, best_ms, 0, 0};
    return h;
  };
  const Table t = history_table({row(1, "h100", 1.0), row(2, "a100", 5.0), row(3, "h100", 0), row(4, "h100", 0.8)});
  const auto j = nlohmann::json::parse(render(t, Format::Json));
  ASSERT_EQ(j.size(), 4u);
  EXPECT_TRUE(j[0]["change_pct"].is_null());  // the first of its series
  EXPECT_TRUE(j[1]["change_pct"].is_null());  // another GPU kind
  EXPECT_TRUE(j[2]["best_objective_ms"].is_null());
  EXPECT_TRUE(j[2]["change_pct"].is_null());
  EXPECT_NEAR(j[3]["change_pct"].get<double>(), -20, 1e-9);  // against job 1, past job 3 without a best
  EXPECT_EQ(j[3]["best_run"], 40);
  EXPECT_EQ(j[3]["best_knobs"]["a"], 1);
  EXPECT_EQ(cell(t, 3, "change_pct").text, "-20.0%");
}

// Each figure's speed-up is over 1 where this job is faster: the earlier time over this one's, this prefill rate over
// the earlier's; a side without figures has none.
TEST(Views, CompareSpeedupsAreOverOneWhereThisJobIsFaster) {
  coord::Comparison c;
  c.job = 5;
  c.against = 3;
  const db::Figures now{50, 51, "k", "{\"a\": 2}", true, 0.5, 0.25, 2000, 0};
  const db::Figures before{30, 31, "k", "{\"a\": 1}", true, 1.0, 0.5, 1000, 0};
  c.rows = {{"h100", true, now, before}, {"h100", false, now, before}, {"h100", true, std::nullopt, before}};
  db::HistoryRow h;
  h.gpu = "h100";
  h.reused = 2;
  c.job_rows = c.against_rows = {h};
  const Table t = compare_table(c);
  const auto j = nlohmann::json::parse(render(t, Format::Json));
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["row"], "best");
  EXPECT_EQ(j[1]["row"], "both measured");
  EXPECT_DOUBLE_EQ(j[0]["objective_speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j[0]["decode_speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j[0]["prefill_speedup"].get<double>(), 2.0);
  EXPECT_EQ(j[0]["config"], 51);
  EXPECT_EQ(j[0]["against_config"], 31);
  EXPECT_TRUE(j[2]["objective_speedup"].is_null());
  EXPECT_TRUE(j[2]["config"].is_null());
  EXPECT_EQ(cell(t, 0, "knob_changes").text, "a=2");
  EXPECT_EQ(cell(t, 0, "objective_speedup").text, "2.00x");
  EXPECT_EQ(j[0]["reused_left_out"], 2);  // programs are told what was left out too
  EXPECT_EQ(j[0]["against_replayed_left_out"], 0);
  // People are told what was left out.
  const std::string shown = render(t, Format::Table);
  EXPECT_NE(shown.find("reused and replayed runs are left out"), std::string::npos) << shown;
  EXPECT_NE(shown.find("left out 2 reused"), std::string::npos) << shown;
}

}  // namespace
}  // namespace lt::test
