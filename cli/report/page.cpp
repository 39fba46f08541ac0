// The report's page: the header and tables written here (every text escaped), a section per chart with its canvas,
// and the template's markers filled with the data and the embedded Chart.js.
#include <algorithm>
#include <ctime>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "compiler/error.hpp"
#include "output/units.hpp"
#include "report/embedded.hpp"
#include "report/report.hpp"

namespace lt::cli {
namespace {

using nlohmann::json;

// The licence of the Chart.js the page inlines (Debian's /usr/share/doc/libjs-chart.js/copyright), as a comment
// before it.
constexpr const char* kChartJsLicence =
    R"(<!-- Chart.js 3.9.1 (https://www.chartjs.org), inlined from Debian's libjs-chart.js.
Copyright (c) 2014-2022 Chart.js Contributors. Released under the MIT License:

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated
documentation files (the "Software"), to deal in the Software without restriction, including without limitation the
rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and to permit
persons to whom the Software is furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or substantial portions of the
Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE
WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR
COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE. -->)";

// Script text that cannot end its <script> element early: every "</" written "<\/" and "<!--" written "<\!--" (the
// same characters in the strings, regular expressions and comments where a script can hold them).
std::string script_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] == '<' && i + 1 < s.size() && (s[i + 1] == '/' || s.substr(i + 1, 3) == "!--")) out += '\\';
  }
  return out;
}

// `s` with each character that `with` names written as its replacement.
std::string replaced(std::string_view s, std::initializer_list<std::pair<char, std::string_view>> with) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto* r = std::find_if(with.begin(), with.end(), [ch](const auto& w) { return w.first == ch; });
    if (r == with.end())
      out += ch;
    else
      out += r->second;
  }
  return out;
}

// Fills `marker` in `page` (its first occurrence) with `value`; the value is not searched for markers.
void fill(std::string& page, std::string_view marker, const std::string& value) {
  const size_t at = page.find(marker);
  if (at == std::string::npos) throw lt::Error("the report's template has no marker " + std::string(marker));
  page.replace(at, marker.size(), value);
}

std::string str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

double num(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0;
}

// A table row of a name and a value (escaped here).
std::string fact(const std::string& name, const std::string& value) {
  return "<tr><th>" + html_escape(name) + "</th><td>" + html_escape(value) + "</td></tr>\n";
}

std::string cell(const std::string& text, bool numeric = false) {
  return std::string(numeric ? "<td class=\"n\">" : "<td>") + html_escape(text) + "</td>";
}

std::string when(double at) {
  if (!(at > 0)) return "-";
  const std::time_t t = std::time_t(at);
  char b[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return b;
}

// The job's particulars, then a row per GPU kind: its counts and its winner.
std::string header(const json& data) {
  const json& j = data["job"];
  const auto id = std::to_string(j["id"].get<int64_t>());
  std::string gpus;
  for (const auto& g : j["gpus"]) gpus += (gpus.empty() ? "" : ", ") + g.get<std::string>();
  const auto context = j["context"].get<uint32_t>();
  std::string objective = str(j, "objective");
  if (objective == "workload" && num(j, "workload_gen") > 0)
    objective += " (" + thousands(num(j, "workload_prompt")) + " prompt tokens + " + thousands(num(j, "workload_gen")) +
                 " generated)";
  std::string h = "<header><h1>lane-tune report: job " + id + "</h1>\n<p class=\"note\">written " +
                  html_escape(when(double(std::time(nullptr)))) + "</p></header>\n";
  h += "<section id=\"job\"><h2>The job</h2>\n<table class=\"facts\">\n";
  h += fact("job", id) + fact("state", str(j, "state")) + fact("checkpoint", str(j, "checkpoint")) +
       fact("model", str(j, "checkpoint_name")) + fact("GPU kinds", gpus) +
       fact("context", context ? thousands(context) + " positions" : "the model's (at most 4,096 positions)") +
       fact("strategy", str(j, "strategy")) + fact("objective", objective) +
       fact("submitted", when(num(j, "created_at")));
  if (!str(j, "message").empty()) h += fact("message", str(j, "message"));
  h += "</table>\n<table class=\"counts\">\n<tr><th>gpu</th><th>runs</th><th>verified</th><th>screened</th>"
       "<th>invalid</th><th>reused</th><th>replayed</th><th>best config</th><th>run</th><th>objective</th>"
       "<th>decode</th><th>prefill</th><th>knobs (vs the defaults)</th></tr>\n";
  for (const auto& k : data["kinds"]) {
    const json& c = k["counts"];
    h += "<tr>" + cell(k["gpu"].get<std::string>());
    for (const char* n : {"runs", "verified", "screened", "invalid", "reused", "replayed"})
      h += cell(thousands(num(c, n)), true);
    const json& b = k["best"];
    if (b.is_null()) {
      h += "<td colspan=\"6\">no verified configuration</td>";
    } else {
      h += cell(std::to_string(b["config"].get<int64_t>()), true) +
           cell(std::to_string(b["run"].get<int64_t>()), true) + cell(duration_ms(num(b, "objective_ms")), true) +
           cell(rate(num(b, "decode_tok_s")), true) +
           cell(num(b, "prefill_tok_s") > 0 ? rate(num(b, "prefill_tok_s")) : "-", true) + cell(str(b, "knob_changes"));
    }
    h += "</tr>\n";
  }
  h += "</table>\n<p class=\"note\">reused: copied from an earlier measurement of the same configuration; replayed: "
       "answered from a recording, not measured on a GPU.</p>\n";
  for (const auto& k : data["kinds"])
    if (!k["best"].is_null())
      h += "<details><summary>every knob of the best configuration on " + html_escape(k["gpu"].get<std::string>()) +
           " (as <code>lane-tune best " + id + " --knobs FILE</code> writes them)</summary><pre>" +
           html_escape(k["best"]["knobs"].dump(1)) + "</pre></details>\n";
  return h + "</section>\n";
}

// A chart's figure: its caption and its canvas.
std::string figure(const json& c) {
  return "<figure><figcaption>" + html_escape(str(c, "title")) + "</figcaption><div class=\"plot\"><canvas id=\"" +
         html_escape(str(c, "id")) + "\"></canvas></div></figure>\n";
}

// The profile's table: per launch kind, each form's launches, microseconds and share.
std::string profile_table(const json& c) {
  std::string t = "<table><tr><th>kind</th>";
  for (const auto& f : c["forms"])
    t += "<th>" + html_escape(str(f, "label")) + ": launches</th><th>us</th><th>share</th>";
  t += "</tr>\n";
  for (const auto& k : c["kinds"]) {
    t += "<tr>" + cell(str(k, "kind"));
    for (size_t i = 0; i < c["forms"].size(); ++i)
      t += cell(std::to_string(k["launches"][i].get<int>()), true) +
           cell(significant(k["us"][i].get<double>(), 3), true) +
           cell(significant(100 * k["share"][i].get<double>(), 3) + "%", true);
    t += "</tr>\n";
  }
  t += "<tr><th>all</th>";
  for (const auto& f : c["forms"]) t += "<td></td>" + cell(significant(num(f, "total_us"), 3), true) + "<td></td>";
  return t + "</tr></table>\n";
}

// The charts of `types` under a heading; `none` where there are none. Charts of `grid_type` go in a grid of small
// ones.
std::string section(const json& charts, const std::string& heading, std::initializer_list<std::string_view> types,
                    const std::string& none, std::string_view grid_type = "") {
  std::string s = "<section><h2>" + html_escape(heading) + "</h2>\n", grid;
  bool any = false;
  for (const auto& c : charts) {
    const std::string type = str(c, "type");
    if (std::find(types.begin(), types.end(), type) == types.end()) continue;
    any = true;
    if (type == grid_type) {
      grid += figure(c);
      continue;
    }
    s += figure(c);
    if (type == "profile")
      s += "<p class=\"note\">run " + std::to_string(c["run"].get<int64_t>()) + " (config " +
           std::to_string(c["config"].get<int64_t>()) + "): each launch timed once under --profile.</p>\n" +
           profile_table(c);
  }
  if (!grid.empty()) s += "<div class=\"grid\">\n" + grid + "</div>\n";
  if (!any) s += "<p>" + html_escape(none) + "</p>\n";
  return s + "</section>\n";
}

}  // namespace

bool report_available() {
  return !embedded::chartjs().empty();
}

void require_report() {
  if (!report_available())
    throw lt::Error(
        "this lane-tune was built without Chart.js, which the report's plots are drawn with: install Debian's "
        "libjs-chart.js (scripts/setup.sh does) and build again");
}

std::string html_escape(const std::string& s) {
  return replaced(s, {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"}});
}

std::string script_json(const nlohmann::json& j) {
  return replaced(j.dump(-1, ' ', false, json::error_handler_t::replace),
                  {{'<', "\\u003c"}, {'>', "\\u003e"}, {'&', "\\u0026"}});
}

std::string report_page(const nlohmann::json& data) {
  require_report();
  const json& charts = data["charts"];
  std::string body = header(data);
  body += section(charts, "Configurations", {"configurations", "knob"}, "No valid configuration measured yet.", "knob");
  body += section(charts, "The search's progress", {"progress"}, "No valid measurement yet.");
  body += section(charts, "The best configuration's profile", {"profile"},
                  "No profile: no verified configuration yet, or its run was not profiled.");
  body += section(charts, "Nightly runs", {"nightly"},
                  "This job has no release with nightly runs (`lane-tune export`, then `lane-tune nightly`).");
  // Filled from the last marker to the first: each marker is found in the template, before what was filled in.
  std::string page(embedded::page_template());
  fill(page, "/*lt:chartjs*/", script_text(embedded::chartjs()));
  fill(page, "<!--lt:chartjs-licence-->", kChartJsLicence);
  fill(page, "/*lt:data*/", script_json(data));
  fill(page, "<!--lt:body-->", body);
  fill(page, "<!--lt:title-->",
       html_escape("lane-tune report: job " + std::to_string(data["job"]["id"].get<int64_t>())));
  return page;
}

}  // namespace lt::cli
