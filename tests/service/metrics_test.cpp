// The coordinator's /metrics: Prometheus' text format, scraped over loopback from a core whose jobs, plans, leases,
// workers and measurements change under the test's clock.
#include <httplib.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "coordinator/core.hpp"
#include "coordinator/metrics.hpp"
#include "fake_compiler.hpp"
#include "support/test_support.hpp"

namespace lt::coord {
namespace {

// A scrape read as the text format (version 0.0.4) defines it: every sample by its name and labels as written, and
// what is wrong with the text, line by line (a sample whose family has no TYPE before it, a malformed line).
struct Scrape {
  std::map<std::string, double> samples;     // `name{labels}` -> value
  std::map<std::string, std::string> types;  // family -> gauge | counter | histogram | ...
  std::vector<std::string> errors;

  explicit Scrape(const std::string& text) {
    static const std::string label = R"([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")";
    static const std::regex sample("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{" + label + "(?:," + label +
                                   ")*\\})? ([-+]?(?:[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?|Inf|NaN))");
    static const std::regex help("# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+");
    static const std::regex type("# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)");
    std::istringstream in(text);
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
      if (std::regex_match(line, m, type)) {
        types[m[1]] = m[2];
      } else if (std::regex_match(line, m, sample)) {
        std::string family = m[1];
        for (const char* suffix : {"_bucket", "_sum", "_count"})
          if (family.ends_with(suffix) && !types.count(family)) family.resize(family.size() - strlen(suffix));
        if (!types.count(family)) errors.push_back("no TYPE before: " + line);
        samples[std::string(m[1]) + std::string(m[2])] = std::stod(m[3]);
      } else if (!std::regex_match(line, help)) {
        errors.push_back("not the text format: " + line);
      }
    }
  }
  // The sample's value; -1 when the scrape has none such.
  double operator[](const std::string& name) const {
    auto it = samples.find(name);
    return it == samples.end() ? -1 : it->second;
  }
};

// A core under the test's clock (plans made as the job is submitted), its metrics served on a free loopback port.
struct Served {
  test::TempDir dir;
  double clock = 1000;
  std::unique_ptr<Coordinator> core;
  std::unique_ptr<MetricsServer> metrics;

  Served() {
    std::ofstream(dir / "model.gguf") << "GGUF and some bytes";
    Options o;
    o.data_dir = dir / "data";
    o.path_roots = {dir.path()};
    o.replenish_inline = true;
    core = std::make_unique<Coordinator>(dir / "lt.db", o, std::make_unique<test::FakeCompiler>(5),
                                         [this] { return clock; });
    metrics = std::make_unique<MetricsServer>(*core, "127.0.0.1:0");
  }
  // GET /metrics over loopback, checked to be the text format throughout.
  Scrape scrape() {
    httplib::Client http("127.0.0.1", metrics->port());
    auto res = http.Get("/metrics");
    if (!res) {
      ADD_FAILURE() << "no answer from /metrics: " << httplib::to_string(res.error());
      return Scrape("");
    }
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    Scrape s(res->body);
    EXPECT_TRUE(s.errors.empty()) << s.errors.front() << "\nin:\n" << res->body;
    return s;
  }
};

TEST(Metrics, AScrapeFollowsTheJobsPlansLeasesWorkersAndMeasurements) {
  Served s;
  auto before = s.scrape();
  EXPECT_EQ(before.types["lane_tune_jobs"], "gauge");
  EXPECT_EQ(before.types["lane_tune_lease_latency_seconds"], "histogram");
  EXPECT_EQ(before.types["lane_tune_measurements_total"], "counter");
  EXPECT_EQ(before["lane_tune_jobs{state=\"running\"}"], 0);
  EXPECT_EQ(before["lane_tune_plans{state=\"pending\"}"], 0);
  EXPECT_EQ(before["lane_tune_leases_held"], 0);
  EXPECT_EQ(before["lane_tune_lease_latency_seconds_count"], 0);

  JobSpec spec;
  spec.path = (s.dir / "model.gguf").string();
  spec.gpus = {"h100"};
  spec.strategy = "grid";
  s.core->submit(spec);
  auto submitted = s.scrape();
  EXPECT_EQ(submitted["lane_tune_jobs{state=\"running\"}"], 1);
  EXPECT_EQ(submitted["lane_tune_jobs{state=\"done\"}"], 0);
  EXPECT_EQ(submitted["lane_tune_plans{state=\"pending\"}"], 5);

  db::Worker w;
  w.name = "w1";
  w.gpu = "h100";
  const int64_t worker = s.core->register_worker(w);
  auto leases = s.core->lease(worker, 2);
  ASSERT_EQ(leases.size(), 2u);
  db::Run r;
  r.valid = true;
  r.median_ms = 1;
  ASSERT_TRUE(s.core->report(worker, leases[0].plan.id, leases[0].plan.lease, r));
  auto working = s.scrape();
  EXPECT_EQ(working["lane_tune_plans{state=\"pending\"}"], 3);
  EXPECT_EQ(working["lane_tune_plans{state=\"leased\"}"], 1);
  EXPECT_EQ(working["lane_tune_plans{state=\"done\"}"], 1);
  EXPECT_EQ(working["lane_tune_leases_held"], 1);
  EXPECT_EQ(working["lane_tune_workers{gpu=\"h100\",state=\"busy\"}"], 1);
  EXPECT_EQ(working["lane_tune_workers{gpu=\"h100\",state=\"gone\"}"], 0);
  EXPECT_EQ(working["lane_tune_lease_latency_seconds_count"], 1);
  EXPECT_EQ(working["lane_tune_lease_latency_seconds_bucket{le=\"+Inf\"}"], 1);
  EXPECT_EQ(working["lane_tune_measurements_last_minute{gpu=\"h100\"}"], 1);
  EXPECT_EQ(working["lane_tune_measurements_total{gpu=\"h100\"}"], 1);

  // A minute on, nobody heard from: the lease has expired, the worker is gone, the measurement is past the minute.
  s.clock += 61;
  auto later = s.scrape();
  EXPECT_EQ(later["lane_tune_leases_held"], 0);
  EXPECT_EQ(later["lane_tune_workers{gpu=\"h100\",state=\"busy\"}"], 0);
  EXPECT_EQ(later["lane_tune_workers{gpu=\"h100\",state=\"gone\"}"], 1);
  EXPECT_EQ(later["lane_tune_measurements_last_minute{gpu=\"h100\"}"], 0);
  EXPECT_EQ(later["lane_tune_measurements_total{gpu=\"h100\"}"], 1);
}

TEST(Metrics, ServesOnlyMetricsAndOnlyOnAFreePort) {
  Served s;
  httplib::Client http("127.0.0.1", s.metrics->port());
  auto res = http.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  res = http.Post("/metrics", "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_NE(res->status, 200);
  EXPECT_THROW(MetricsServer(*s.core, "127.0.0.1:" + std::to_string(s.metrics->port())), lt::Error);
  EXPECT_THROW(MetricsServer(*s.core, "127.0.0.1:99999"), lt::Error);
  EXPECT_THROW(MetricsServer(*s.core, "9117"), lt::Error);
}

// The text itself: a histogram's buckets cumulative up to +Inf, its sum and count; label values escaped.
TEST(Metrics, TheTextFormatsHistogramsAndEscapesLabels) {
  Metrics m;
  m.lease_latency = lease_latency_histogram();
  m.lease_latency.observe(0.002);
  m.lease_latency.observe(3);
  m.measurements_total["a\"b\\c\nd"] = 2;
  Scrape s(prometheus_text(m));
  EXPECT_TRUE(s.errors.empty()) << s.errors.front();
  EXPECT_EQ(s["lane_tune_lease_latency_seconds_bucket{le=\"0.001\"}"], 0);
  EXPECT_EQ(s["lane_tune_lease_latency_seconds_bucket{le=\"0.0025\"}"], 1);
  EXPECT_EQ(s["lane_tune_lease_latency_seconds_bucket{le=\"2.5\"}"], 1);
  EXPECT_EQ(s["lane_tune_lease_latency_seconds_bucket{le=\"5\"}"], 2);
  EXPECT_EQ(s["lane_tune_lease_latency_seconds_bucket{le=\"+Inf\"}"], 2);
  EXPECT_DOUBLE_EQ(s["lane_tune_lease_latency_seconds_sum"], 3.002);
  EXPECT_EQ(s["lane_tune_lease_latency_seconds_count"], 2);
  EXPECT_EQ(s["lane_tune_measurements_total{gpu=\"a\\\"b\\\\c\\nd\"}"], 2);
}

}  // namespace
}  // namespace lt::coord
