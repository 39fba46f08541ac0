// The report's data: a job's runs, winners and nights reduced to the series its charts draw.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "compiler/knobs.hpp"
#include "coordinator/client.hpp"
#include "output/views.hpp"
#include "report/report.hpp"

namespace lt::cli {
namespace {

using nlohmann::json;

// A run's decode rate: its measured tok/s, else 1000 over its milliseconds per token.
double decode_tok_s(const db::Run& r) {
  return r.tok_per_s > 0 ? r.tok_per_s : r.median_ms > 0 ? 1000 / r.median_ms : 0;
}

// Stored JSON (knobs, a profile) as an object; an empty object for text that is not one.
json object_of(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  return j.is_object() ? j : json::object();
}

// Whether `a` stands for its configuration better than `b`: verified first, then the later stage, then the later run.
bool stands_before(const db::Run& a, const db::Run& b) {
  if (a.verified != b.verified) return a.verified;
  if (a.stage != b.stage) return a.stage > b.stage;
  return a.id > b.id;
}

// The runs' counts people check a job by.
json counts(const std::vector<const db::Run*>& runs) {
  int verified = 0, screened = 0, invalid = 0, reused = 0, replayed = 0;
  for (const auto* r : runs) {
    verified += r->valid && r->verified;
    screened += r->valid && !r->verified;
    invalid += !r->valid;
    reused += r->reused_from != 0;
    replayed += coord::replayed(*r);
  }
  return {{"runs", runs.size()}, {"verified", verified}, {"screened", screened},
          {"invalid", invalid},  {"reused", reused},     {"replayed", replayed}};
}

// The winner as the header shows it; null without one.
json winner_json(const db::Run* w) {
  if (!w) return nullptr;
  const json knobs = object_of(w->knobs);
  const std::string changes = knob_changes(knobs, lt::knobs::Knobs{}.to_json());
  return {{"run", w->id},
          {"config", w->config},
          {"objective_ms", w->objective_ms},
          {"decode_ms", w->median_ms},
          {"decode_tok_s", decode_tok_s(*w)},
          {"prefill_tok_s", w->prefill_tok_s},
          {"knobs", knobs},
          {"knob_changes", changes.empty() ? "(the defaults)" : changes}};
}

// Makes the charts' ids: c1, c2, ...
struct Charts {
  json list = json::array();
  json& add(const std::string& type, const std::string& title) {
    list.push_back({{"id", "c" + std::to_string(list.size() + 1)}, {"type", type}, {"title", title}});
    return list.back();
  }
};

// Each configuration's point (its standing run) and a strip per knob that varies among them.
void configuration_charts(Charts& charts, const std::string& gpu, const std::vector<const db::Run*>& runs,
                          const db::Run* winner) {
  std::map<int64_t, const db::Run*> standing;  // by configuration
  for (const auto* r : runs)
    if (r->valid && r->objective_ms > 0) {
      auto& s = standing[r->config];
      if (!s || stands_before(*r, *s)) s = r;
    }
  if (standing.empty()) return;
  const json reference = object_of((winner ? winner : standing.begin()->second)->knobs);
  json& scatter = charts.add("configurations", gpu + ": each configuration's decode and prefill");
  scatter["gpu"] = gpu;
  scatter["points"] = json::array();
  std::map<std::string, std::set<json>> values;  // each knob's values among the configurations
  for (const auto& [config, r] : standing) {
    const json knobs = object_of(r->knobs);
    for (const auto& [name, v] : knobs.items()) values[name].insert(v);
    const std::string changes = knob_changes(knobs, reference);
    scatter["points"].push_back({{"x", decode_tok_s(*r)},
                                 {"y", r->prefill_tok_s},
                                 {"config", config},
                                 {"run", r->id},
                                 {"verdict", coord::to_string(coord::verdict_of(*r))},
                                 {"best", winner && winner->id == r->id},
                                 {"objective_ms", r->objective_ms},
                                 {"knobs", changes.empty() ? "(the winner's knobs)" : changes}});
  }
  for (const auto& [name, seen] : values) {
    if (seen.size() < 2) continue;
    const std::vector<json> ordered(seen.begin(), seen.end());
    json& strip = charts.add("knob", gpu + ": the objective by " + name);
    strip["gpu"] = gpu;
    strip["knob"] = name;
    strip["values"] = json::array();
    for (const auto& v : ordered) strip["values"].push_back(knob_text(v));
    strip["points"] = json::array();
    for (const auto& [config, r] : standing) {
      const json knobs = object_of(r->knobs);
      if (!knobs.contains(name)) continue;
      const auto at = std::find(ordered.begin(), ordered.end(), knobs[name]) - ordered.begin();
      strip["points"].push_back({{"x", at}, {"y", r->objective_ms}, {"config", config}});
    }
  }
}

// A best-so-far line: a step at each new best, held to `last_s`.
struct BestSoFar {
  json points = json::array();
  double best_ms = 0;
  void see(double s, double ms) {
    if (best_ms != 0 && ms >= best_ms) return;
    best_ms = ms;
    points.push_back({{"x", s}, {"y", ms}});
  }
  json held_to(double last_s) && {
    if (!points.empty() && points.back()["x"].get<double>() < last_s) points.push_back({{"x", last_s}, {"y", best_ms}});
    return std::move(points);
  }
};

// Every valid measurement by seconds since the submit, in the order recorded, and the best objective so far: of the
// verified runs (the best configuration's rule) and of every valid run, screens too.
void progress_chart(Charts& charts, const std::string& gpu, std::vector<const db::Run*> runs, double created_at) {
  std::sort(runs.begin(), runs.end(), [](const db::Run* a, const db::Run* b) {
    return a->recorded_at != b->recorded_at ? a->recorded_at < b->recorded_at : a->id < b->id;
  });
  json measurements = json::array();
  BestSoFar verified, valid;
  double last_s = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = *runs[i];
    const double s = std::max(0.0, r.recorded_at - created_at);
    last_s = std::max(last_s, s);
    if (!r.valid || !(r.objective_ms > 0)) continue;
    measurements.push_back({{"x", s},
                            {"y", r.objective_ms},
                            {"run", r.id},
                            {"index", i + 1},
                            {"verdict", coord::to_string(coord::verdict_of(r))}});
    valid.see(s, r.objective_ms);
    if (r.verified) verified.see(s, r.objective_ms);
  }
  if (measurements.empty()) return;
  json& c = charts.add("progress", gpu + ": the search's progress");
  c["gpu"] = gpu;
  c["measurements"] = std::move(measurements);
  c["best"] = std::move(verified).held_to(last_s);
  c["best_valid"] = std::move(valid).held_to(last_s);
  c["runs"] = runs.size();
}

// A run's profile when it timed launches (a run not profiled stores none, or only its total).
std::optional<json> launches_of(const db::Run& r) {
  json profile = object_of(r.profile);
  if (!profile.contains("launches") || !profile["launches"].is_array() || profile["launches"].empty())
    return std::nullopt;
  return profile;
}

// The run whose profile stands for the winner's configuration: the winner's own, else the latest profiled run of the
// same configuration (a search that profiles its screens only, as successive halving does); none without one.
const db::Run* profiled(const db::Run& winner, const std::vector<const db::Run*>& runs) {
  if (launches_of(winner)) return &winner;
  const db::Run* found = nullptr;
  for (const auto* r : runs)
    if (r->config == winner.config && launches_of(*r) && (!found || r->id > found->id)) found = r;
  return found;
}

// The launches of the winner's configuration by kind per form (the decode step, each prefill chunk size):
// microseconds and share of the form's time, from `profiled`'s run.
void profile_chart(Charts& charts, const std::string& gpu, const db::Run& run) {
  const json profile = *launches_of(run);
  std::map<int, double> total;                        // by rows
  std::map<std::string, std::map<int, double>> us;    // by kind, then rows
  std::map<std::string, std::map<int, int>> counted;  // launches by kind, then rows
  for (const auto& l : profile["launches"]) {
    if (!l.is_object()) continue;
    const int rows = std::max(1, l.value("rows", 1));
    const double t = l.contains("us") && l["us"].is_number() ? l["us"].get<double>() : 0;
    const std::string kind = l.contains("kind") && l["kind"].is_string() ? l["kind"].get<std::string>() : "?";
    total[rows] += t;
    us[kind][rows] += t;
    counted[kind][rows] += 1;
  }
  std::vector<int> forms;
  for (const auto& [rows, t] : total) forms.push_back(rows);
  std::vector<std::string> kinds;
  for (const auto& [kind, by_rows] : us) kinds.push_back(kind);
  // The kinds that take most of the first form's time (the decode step where there is one) first.
  std::stable_sort(kinds.begin(), kinds.end(),
                   [&](const std::string& a, const std::string& b) { return us[a][forms[0]] > us[b][forms[0]]; });
  json& c = charts.add("profile", gpu + ": the best configuration's launches by kind");
  c["gpu"] = gpu;
  c["run"] = run.id;
  c["config"] = run.config;
  c["forms"] = json::array();
  for (int rows : forms)
    c["forms"].push_back({{"rows", rows},
                          {"label", rows == 1 ? "decode step" : "prefill chunk, " + std::to_string(rows) + " rows"},
                          {"total_us", total[rows]}});
  c["kinds"] = json::array();
  for (const auto& kind : kinds) {
    json k = {{"kind", kind}, {"us", json::array()}, {"share", json::array()}, {"launches", json::array()}};
    for (int rows : forms) {
      k["us"].push_back(us[kind][rows]);
      k["share"].push_back(total[rows] > 0 ? us[kind][rows] / total[rows] : 0.0);
      k["launches"].push_back(counted[kind][rows]);
    }
    c["kinds"].push_back(std::move(k));
  }
}

// A line per release and GPU kind with nights: each judged night's median against the release's baseline.
void nightly_charts(Charts& charts, const std::vector<db::NightRow>& nights) {
  std::map<std::pair<int64_t, std::string>, std::vector<const db::NightRow*>> by_release;
  for (const auto& n : nights) by_release[{n.release, n.gpu}].push_back(&n);
  for (const auto& [key, rows] : by_release) {
    json& c = charts.add("nightly", "release " + std::to_string(key.first) + " on " + key.second + ": nightly runs");
    c["release"] = key.first;
    c["gpu"] = key.second;
    c["baseline_ms"] = rows.front()->baseline_ms;
    c["nights"] = json::array();
    for (const auto* n : rows)
      c["nights"].push_back({{"night", n->night},
                             {"started_at", n->started_at},
                             {"median_ms", n->median_ms > 0 ? json(n->median_ms) : json(nullptr)},
                             {"change_pct", n->change_pct},
                             {"verdict", n->verdict}});
  }
}

}  // namespace

nlohmann::json report_data(const ReportInput& in) {
  const auto& j = in.status.job;
  json data = {{"job",
                {{"id", j.id},
                 {"state", j.state},
                 {"checkpoint", j.checkpoint},
                 {"checkpoint_name", in.status.checkpoint_name},
                 {"gpus", j.gpus},
                 {"context", j.context},
                 {"strategy", j.strategy},
                 {"objective", j.objective},
                 {"workload_prompt", j.workload_prompt},
                 {"workload_gen", j.workload_gen},
                 {"created_at", j.created_at},
                 {"message", j.message}}},
               {"kinds", json::array()}};
  Charts charts;
  for (const auto& gpu : j.gpus) {
    std::vector<const db::Run*> runs;
    for (const auto& r : in.runs)
      if (r.gpu == gpu) runs.push_back(&r);
    const db::Run* winner = nullptr;
    for (const auto& w : in.winners)
      if (w.gpu == gpu) winner = &w;
    data["kinds"].push_back({{"gpu", gpu}, {"counts", counts(runs)}, {"best", winner_json(winner)}});
    configuration_charts(charts, gpu, runs, winner);
    progress_chart(charts, gpu, runs, j.created_at);
    if (const db::Run* p = winner ? profiled(*winner, runs) : nullptr) profile_chart(charts, gpu, *p);
  }
  nightly_charts(charts, in.nights);
  data["charts"] = std::move(charts.list);
  return data;
}

}  // namespace lt::cli
