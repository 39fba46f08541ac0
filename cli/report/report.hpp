// `lane-tune report`'s page: a job's records turned into the plots' data (what to draw, computed here), and that data
// turned into one self-contained HTML page that draws it with the embedded Chart.js (how to draw it).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/core.hpp"
#include "coordinator/releases.hpp"

namespace lt::cli {

// What a report is made of, as the coordinator serves it: the job, every run (profiles too), each GPU kind's winner,
// and the nights of the job's releases.
struct ReportInput {
  coord::JobStatus status;
  std::vector<db::Run> runs;
  std::vector<db::Run> winners;
  std::vector<db::NightRow> nights;
};

// The report's data: the job's particulars (`job`), per GPU kind its counts and winner (`kinds`), and the charts, each
// {"id", "type", "title", ...its series}: per GPU kind a `configurations` scatter (decode tok/s against prefill tok/s,
// one point per configuration: its latest valid run), a `knob` strip per knob whose value varies (each
// configuration's objective by the knob's value), `progress` (every valid measurement's objective by seconds since
// the submit, the best verified objective so far, and the best of every valid run so far), `profile` (the winner's
// configuration's launches by kind: each form's share and microseconds, from the winner's run, else its configuration's
// latest profiled run; none without one); and per release of the job with nights a `nightly` line (each night's median
// against the baseline).
nlohmann::json report_data(const ReportInput& in);

// Whether this lane-tune carries Chart.js (it was built where Debian's libjs-chart.js was installed).
bool report_available();
// Throws lt::Error saying what to install unless report_available().
void require_report();

// The page: a header table, a section per chart with its canvas, the profile's table, and Chart.js and the data
// inlined in scripts (no external resource). Every text is HTML-escaped and the data is JSON with `<`, `>` and `&`
// escaped, so no value can close a script or add markup. Throws lt::Error when !report_available().
std::string report_page(const nlohmann::json& data);

// `s` with &, <, >, " and ' written as character references (for text and attribute values).
std::string html_escape(const std::string& s);
// JSON for a <script type="application/json"> element: `<`, `>` and `&` written as \u escapes.
std::string script_json(const nlohmann::json& j);

}  // namespace lt::cli
