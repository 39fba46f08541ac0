// The tuning service's records laid out as tables: which columns, for whom, and each figure scaled.
#include "output/views.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "compiler/knobs.hpp"
#include "coordinator/client.hpp"
#include "output/units.hpp"

namespace lt::cli {
namespace {

using coord::JobStatus;

// Knobs' and failure reasons' cells are cut for people: a terminal line stays readable (JSON and CSV carry them).
constexpr size_t kKnobsWidth = 48;
constexpr size_t kReasonWidth = 48;
// A content digest's first digits, as people are shown it (the full digest is the value).
constexpr size_t kShortDigest = 12;

// Columns for everyone, for people only (the terminal, Markdown) and for programs only (JSON, CSV; titled by key).
Column shared(std::string key, std::string title, bool numeric = false) {
  return {std::move(key), std::move(title), numeric, Audience::Everyone, 0};
}
Column people(std::string key, std::string title, size_t max_width = 0) {
  return {std::move(key), std::move(title), false, Audience::People, max_width};
}
Column programs(std::string key) {
  return {key, key, false, Audience::Programs, 0};
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A time in milliseconds for people, read as the number; "-" and null when not measured (0).
Cell time_cell(double ms) {
  return ms > 0 ? number(ms, duration_ms(ms)) : none();
}
// A spread (two significant figures) where its time was measured.
Cell spread_cell(double ms, bool measured) {
  return measured ? number(ms, spread_ms(ms)) : none();
}
// A rate in tok/s where one was measured.
Cell rate_cell(double per_s) {
  return per_s > 0 ? number(per_s, rate(per_s)) : none();
}
// A moment (seconds since the epoch) shown as how long ago.
Cell when_cell(double at) {
  return at > 0 ? number(at, age(now_s() - at) + " ago") : none();
}
// A content digest: its first digits for people, whole for programs.
Cell digest_cell(const std::string& digest) {
  return {digest.substr(0, kShortDigest), nlohmann::json(digest)};
}
// Stored JSON (knobs) as programs read it, an object; `shown` for people.
Cell json_cell(const std::string& text, std::string shown) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return {std::move(shown), j.is_discarded() ? nlohmann::json(text) : j};
}

// The knobs of a run as people read them against `reference`: what differs, "(the winner)" for the winner itself.
std::string knobs_against(const db::Run& r, const db::Run* reference, const char* same) {
  if (reference == &r || (reference->id == r.id && r.id != 0)) return same;
  const auto k = nlohmann::json::parse(r.knobs, nullptr, false);
  const auto ref = nlohmann::json::parse(reference->knobs, nullptr, false);
  const std::string changes = knob_changes(k, ref);
  return changes.empty() ? "(the same knobs)" : changes;
}

const nlohmann::json& default_knobs() {
  static const nlohmann::json d = knobs::Knobs{}.to_json();
  return d;
}

// The flags people read for a run: reused, replayed, cut off.
std::string flags_text(const db::Run& r) {
  std::string s;
  auto add = [&](bool set, const char* name) {
    if (set) s += (s.empty() ? "" : ",") + std::string(name);
  };
  add(r.reused_from != 0, "reused");
  add(coord::replayed(r), "replayed");
  add(r.valid && coord::cut_off(r), "cut off");
  return s;
}

// The workload a job times, as people read it.
std::string workload_text(const db::Job& j) {
  if (j.workload_gen == 0) return "";
  return std::to_string(j.workload_prompt) + " prompt tokens + " + std::to_string(j.workload_gen) + " generated";
}

}  // namespace

std::string knob_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string knob_changes(const nlohmann::json& knobs, const nlohmann::json& reference) {
  if (!knobs.is_object() || !reference.is_object()) return knobs == reference ? "" : knob_text(knobs);
  std::string s;
  for (const auto& [name, value] : knobs.items()) {
    auto it = reference.find(name);
    if (it != reference.end() && *it == value) continue;
    s += (s.empty() ? "" : " ") + name + "=" + knob_text(value);
  }
  return s;
}

Table jobs_table(const std::vector<JobStatus>& jobs) {
  Table t;
  t.columns = {shared("job", "job", true),
               shared("state", "state"),
               shared("gpu", "gpu"),
               shared("checkpoint", "checkpoint"),
               programs("strategy"),
               programs("objective"),
               programs("workload_prompt"),
               programs("workload_gen"),
               shared("measured", "measured", true),
               shared("planned", "planned", true),
               shared("verified", "verified", true),
               shared("failed", "failed", true),
               shared("measuring", "measuring", true),
               programs("open"),
               shared("best_decode_ms", "best decode/token", true),
               shared("best_prefill_tok_s", "prefill", true),
               shared("best_workload_ms", "workload", true),
               programs("best_objective_ms"),
               programs("best_knobs"),
               programs("note"),
               programs("message"),
               shared("created_at", "created", true),
               shared("time_left_s", "left", true)};
  for (const auto& s : jobs) {
    const auto& j = s.job;
    auto row = [&](const db::Progress& g) {
      const bool best = g.best_ms > 0;
      t.add({count(j.id),
             text(j.state),
             text(g.gpu.empty() ? "-" : g.gpu),
             digest_cell(j.checkpoint),
             text(j.strategy),
             text(j.objective),
             count(j.workload_prompt),
             count(j.workload_gen),
             count(g.measured),
             count(g.planned),
             count(g.verified),
             count(g.failed),
             g.measured ? number(g.measuring, std::to_string(int(std::lround(100 * g.measuring))) + "%") : none(),
             count(g.open),
             time_cell(g.best_ms),
             best ? rate_cell(g.best_prefill_tok_s) : none(),
             best ? time_cell(g.best_workload_ms) : none(),
             best ? number(g.best_objective_ms, duration_ms(g.best_objective_ms)) : none(),
             g.best_knobs.empty() ? none() : json_cell(g.best_knobs, ""),
             text(g.note),
             text(j.message),
             when_cell(j.created_at),
             s.time_left_s >= 0 ? number(s.time_left_s, age(s.time_left_s)) : none()});
    };
    if (s.gpus.empty()) row(db::Progress{});
    for (const auto& g : s.gpus) row(g);
  }
  return t;
}

Table job_table(const JobStatus& s) {
  Table t = jobs_table({s});
  const auto& j = s.job;
  std::string line = "checkpoint " + j.checkpoint + ", strategy " + j.strategy + ", objective " + j.objective;
  if (const std::string w = workload_text(j); !w.empty()) line += " (" + w + ")";
  t.notes.push_back(line);
  if (!j.message.empty()) t.notes.push_back(j.message);
  for (const auto& g : s.gpus) {
    if (!g.note.empty()) t.notes.push_back(g.gpu + ": " + g.note);
    if (!g.best_knobs.empty()) {
      const std::string changes = knob_changes(nlohmann::json::parse(g.best_knobs, nullptr, false), default_knobs());
      t.notes.push_back("best on " + g.gpu + " (verified): " + (changes.empty() ? "the default knobs" : changes) +
                        (changes.empty() ? "" : " (the rest: defaults)"));
    }
  }
  return t;
}

std::string progress_line(const JobStatus& s) {
  std::string line = "job " + std::to_string(s.job.id) + " " + s.job.state + ":";
  for (const auto& g : s.gpus) {
    line += " " + g.gpu + " measured " + thousands(g.measured) + " / " + thousands(g.planned) + " planned, " +
            thousands(g.verified) + " verified";
    if (g.failed) line += ", " + thousands(g.failed) + " failed";
    if (g.measured) line += ", measuring " + std::to_string(int(std::lround(100 * g.measuring))) + "% of the time";
    std::string best = "-";
    if (g.best_ms > 0) {
      best = duration_ms(g.best_ms) + "/tok";
      if (g.best_prefill_tok_s > 0) best += " · " + rate(g.best_prefill_tok_s, "prefill tok/s");
      if (g.best_workload_ms > 0) best += " · " + duration_ms(g.best_workload_ms) + " workload";
    }
    line += ", best " + best + ";";
  }
  if (s.time_left_s >= 0) line += " " + age(s.time_left_s) + " left";
  return line;
}

Table results_table(const std::vector<db::Run>& runs, const std::vector<db::Run>& winners) {
  // Each GPU kind's reference: its winner, else the first of its runs listed.
  std::map<std::string, const db::Run*> reference;
  std::set<std::string> without_winner;
  for (const auto& w : winners) reference[w.gpu] = &w;
  for (const auto& r : runs)
    if (!reference.count(r.gpu)) {
      reference[r.gpu] = &r;
      without_winner.insert(r.gpu);
    }
  Table t;
  t.columns = {shared("run", "run", true),
               shared("config", "config", true),
               shared("gpu", "gpu"),
               shared("verdict", "verdict"),
               people("flags", "flags"),
               programs("reused"),
               programs("reused_from"),
               programs("replayed"),
               programs("cut_off"),
               programs("stage"),
               shared("repetitions", "reps", true),
               shared("objective_ms", "objective", true),
               shared("decode_ms", "decode/token", true),
               shared("spread_ms", "spread", true),
               programs("min_ms"),
               programs("max_ms"),
               programs("decode_tok_s"),
               programs("prefill_ms"),
               shared("prefill_tok_s", "prefill", true),
               shared("workload_ms", "workload", true),
               shared("origin", "origin"),
               programs("failure"),
               programs("reason"),
               people("failure_and_reason", "failure", kReasonWidth),
               programs("worker"),
               programs("recorded_at"),
               programs("compile_s"),
               programs("rel_l2"),
               programs("logits_hash"),
               people("knob_changes", "knobs (vs the winner)", kKnobsWidth),
               programs("knobs")};
  bool any_cut_off = false;
  for (const auto& r : runs) {
    const bool cut = r.valid && coord::cut_off(r);
    any_cut_off |= cut;
    std::string failure = r.valid ? "" : (r.failure.empty() ? "invalid" : r.failure);
    if (!r.valid && !r.reason.empty()) failure += ": " + r.reason;
    const auto it = reference.find(r.gpu);  // (every listed run's kind has one)
    t.add({count(r.id),
           count(r.config),
           text(r.gpu),
           text(coord::to_string(coord::verdict_of(r))),
           text(flags_text(r)),
           flag(r.reused_from != 0, "reused"),
           count(r.reused_from),
           flag(coord::replayed(r), "replayed"),
           flag(cut, "cut off"),
           count(r.stage),
           count(r.repetitions),
           r.valid ? number(r.objective_ms, (cut ? "~" : "") + duration_ms(r.objective_ms)) : none(),
           time_cell(r.median_ms),
           spread_cell(r.spread_ms, r.median_ms > 0),
           time_cell(r.min_ms),
           time_cell(r.max_ms),
           rate_cell(r.tok_per_s),
           time_cell(r.prefill_ms),
           rate_cell(r.prefill_tok_s),
           time_cell(r.workload_ms),
           text(r.origin),
           text(r.failure),
           text(r.reason),
           text(failure),
           text(r.worker_name),
           number(r.recorded_at, std::to_string(r.recorded_at)),
           number(r.compile_s, std::to_string(r.compile_s)),
           number(r.rel_l2, std::to_string(r.rel_l2)),
           text(r.logits_hash),
           text(knobs_against(r, it->second, without_winner.count(r.gpu) ? "(first listed)" : "(the winner)")),
           json_cell(r.knobs, "")});
  }
  if (any_cut_off)
    t.notes.push_back(
        "~: a screen stopped after its first run, already past the cutoff (its figures are that run's "
        "estimate)");
  if (!runs.empty())
    t.notes.push_back(std::string("knobs: those that differ from the winner's") +
                      (without_winner.empty() ? "" : " (the first run listed of a GPU kind without a winner)") +
                      "; every knob in --format json or csv");
  return t;
}

Table best_table(const std::vector<db::Run>& winners) {
  Table t;
  t.columns = {shared("gpu", "gpu"),
               shared("run", "run", true),
               shared("config", "config", true),
               programs("verdict"),
               people("flags", "flags"),
               programs("reused_from"),
               programs("replayed"),
               shared("decode_ms", "decode/token", true),
               shared("spread_ms", "spread", true),
               shared("repetitions", "reps", true),
               programs("decode_tok_s"),
               programs("prefill_ms"),
               shared("prefill_tok_s", "prefill", true),
               shared("workload_ms", "workload", true),
               shared("objective_ms", "objective", true),
               shared("origin", "origin"),
               programs("worker"),
               programs("recorded_at"),
               programs("logits_hash"),
               people("knob_changes", "knobs (vs the defaults)", kKnobsWidth),
               programs("knobs")};
  for (const auto& r : winners) {
    const std::string changes = knob_changes(nlohmann::json::parse(r.knobs, nullptr, false), default_knobs());
    t.add({text(r.gpu),
           count(r.id),
           count(r.config),
           text(coord::to_string(coord::verdict_of(r))),
           text(flags_text(r)),
           count(r.reused_from),
           flag(coord::replayed(r), "replayed"),
           time_cell(r.median_ms),
           spread_cell(r.spread_ms, r.median_ms > 0),
           count(r.repetitions),
           rate_cell(r.tok_per_s),
           time_cell(r.prefill_ms),
           rate_cell(r.prefill_tok_s),
           time_cell(r.workload_ms),
           number(r.objective_ms, duration_ms(r.objective_ms)),
           text(r.origin),
           text(r.worker_name),
           number(r.recorded_at, std::to_string(r.recorded_at)),
           text(r.logits_hash),
           text(changes.empty() ? "(the defaults)" : changes),
           json_cell(r.knobs, "")});
  }
  if (!winners.empty())
    t.notes.push_back(
        "knobs: those that differ from the defaults; `best JOB --knobs FILE` writes them all for "
        "`compile --knobs FILE`");
  return t;
}

Table workers_table(const std::vector<coord::WorkerStatus>& workers) {
  Table t;
  t.columns = {shared("worker", "worker", true),
               shared("name", "name"),
               shared("gpu", "gpu"),
               shared("state", "state"),
               shared("seen_ago_s", "last call", true),
               programs("last_seen"),
               shared("leases", "leases", true),
               shared("registered_at", "registered", true)};
  for (const auto& w : workers)
    t.add({count(w.worker.id), text(w.worker.name), text(w.worker.gpu), text(coord::to_string(w.state)),
           number(w.seen_ago_s, age(w.seen_ago_s) + " ago"),
           number(w.worker.last_seen, std::to_string(w.worker.last_seen)), count(w.leases),
           when_cell(w.worker.registered_at)});
  return t;
}

Table releases_table(const std::vector<coord::Release>& releases) {
  Table t;
  t.columns = {shared("release", "release", true),
               shared("job", "job", true),
               shared("gpu", "gpu"),
               shared("checkpoint", "checkpoint"),
               programs("run"),
               shared("decode_ms", "decode/token", true),
               shared("spread_ms", "spread", true),
               shared("repetitions", "reps", true),
               shared("logits_hash", "logits"),
               programs("knobs"),
               shared("created_at", "created", true),
               shared("directory", "directory")};
  for (const auto& r : releases)
    t.add({count(r.id), count(r.job), text(r.gpu), digest_cell(r.checkpoint), count(r.run), time_cell(r.median_ms),
           spread_cell(r.spread_ms, r.median_ms > 0), count(r.repetitions), text(r.logits_hash), json_cell(r.knobs, ""),
           when_cell(r.created_at), text(r.directory)});
  return t;
}

Table night_table(const coord::Night& n) {
  Table t;
  t.columns = {programs("night"),
               shared("release", "release", true),
               shared("gpu", "gpu"),
               shared("job", "job", true),
               shared("baseline_ms", "baseline", true),
               shared("baseline_spread_ms", "spread", true),
               shared("median_ms", "now", true),
               shared("spread_ms", "spread", true),
               programs("repetitions"),
               shared("change_pct", "change", true),
               shared("verdict", "verdict"),
               shared("reason", "reason"),
               programs("logits_hash")};
  for (const auto& r : n.rows) {
    const bool measured = r.median_ms > 0, compared = measured && r.baseline_ms > 0;
    char change[32];
    std::snprintf(change, sizeof change, "%+.1f%%", r.change_pct);
    t.add({count(n.night), count(r.release), text(r.gpu), count(r.job), time_cell(r.baseline_ms),
           spread_cell(r.baseline_spread_ms, r.baseline_ms > 0), time_cell(r.median_ms),
           spread_cell(r.spread_ms, measured), count(r.repetitions), compared ? number(r.change_pct, change) : none(),
           text(r.verdict), text(r.reason), text(r.logits_hash)});
  }
  t.notes.push_back("night " + std::to_string(n.night) + ": decode time per token against each release's baseline");
  return t;
}

}  // namespace lt::cli

namespace lt::cli {
namespace {

// The objective a job times, as people read it: "decode", "workload (512 prompt tokens + 128 generated)".
std::string objective_text(const db::HistoryRow& h) {
  db::Job j;
  j.workload_prompt = h.workload_prompt;
  j.workload_gen = h.workload_gen;
  const std::string w = h.objective == "workload" ? workload_text(j) : "";
  return w.empty() ? h.objective : h.objective + " (" + w + ")";
}

// A speed-up for people ("1.12x"), read as the number; none where either figure is missing.
Cell speedup_cell(double x) {
  return x > 0 ? number(x, significant(x, 3) + "x") : none();
}

// Runs left out of a job's figures, as people read them: "3 reused, 18 replayed" ("none" when none).
std::string left_out_text(const db::HistoryRow& h) {
  std::string s;
  if (h.reused) s += thousands(h.reused) + " reused";
  if (h.replayed) s += (s.empty() ? "" : ", ") + thousands(h.replayed) + " replayed";
  return s.empty() ? "none" : s;
}

}  // namespace

double speedup_of_time(double now_ms, double before_ms) {
  return now_ms > 0 && before_ms > 0 ? before_ms / now_ms : 0;
}

Table history_table(const std::vector<db::HistoryRow>& rows) {
  Table t;
  t.columns = {shared("job", "job", true),
               shared("created_at", "created", true),
               shared("gpu", "gpu"),
               shared("checkpoint", "checkpoint"),
               shared("checkpoint_name", "model"),
               programs("state"),
               programs("strategy"),
               shared("objective", "objective"),
               programs("workload_prompt"),
               programs("workload_gen"),
               programs("context"),
               programs("runs"),
               shared("measured", "measured", true),
               shared("reused", "reused", true),
               shared("replayed", "replayed", true),
               shared("best_objective_ms", "best objective", true),
               shared("best_decode_ms", "decode/token", true),
               shared("best_prefill_tok_s", "prefill", true),
               shared("change_pct", "change", true),
               programs("best_run"),
               programs("best_config"),
               programs("best_knobs")};
  // The previous best objective of each checkpoint, GPU kind and objective, as the rows pass (oldest first).
  std::map<std::string, double> previous;
  for (const auto& h : rows) {
    const auto& b = h.best;
    const std::string series = h.checkpoint + "/" + h.gpu + "/" + objective_text(h);
    Cell change = none();
    if (b) {
      if (auto it = previous.find(series); it != previous.end()) {
        const double pct = (b->objective_ms - it->second) / it->second * 100;
        char shown[32];
        std::snprintf(shown, sizeof shown, "%+.1f%%", pct);
        change = number(pct, shown);
      }
      previous[series] = b->objective_ms;
    }
    t.add({count(h.job),
           when_cell(h.created_at),
           text(h.gpu),
           digest_cell(h.checkpoint),
           text(h.checkpoint_name),
           text(h.state),
           text(h.strategy),
           Cell{objective_text(h), nlohmann::json(h.objective)},
           count(h.workload_prompt),
           count(h.workload_gen),
           count(h.context),
           count(h.runs),
           count(h.measured),
           count(h.reused),
           count(h.replayed),
           b ? time_cell(b->objective_ms) : none(),
           b ? time_cell(b->median_ms) : none(),
           b ? rate_cell(b->prefill_tok_s) : none(),
           change,
           b ? count(b->run) : none(),
           b ? count(b->config) : none(),
           b ? json_cell(b->knobs, "") : none()});
  }
  t.notes.push_back(
      "best: each job's best verified run of those it measured itself (reused and replayed runs left out; nightly "
      "jobs are not listed); change: against the previous job's best on the same checkpoint, GPU kind and objective");
  return t;
}

Table compare_table(const coord::Comparison& c) {
  Table t;
  const std::string now = "job " + std::to_string(c.job), before = "job " + std::to_string(c.against);
  t.columns = {shared("gpu", "gpu"),
               shared("row", "row"),
               shared("config", "config", true),
               shared("against_config", "config before", true),
               programs("run"),
               programs("against_run"),
               shared("objective_ms", "objective", true),
               shared("against_objective_ms", "before", true),
               shared("objective_speedup", "speed-up", true),
               shared("decode_ms", "decode/token", true),
               shared("against_decode_ms", "before", true),
               shared("decode_speedup", "speed-up", true),
               shared("prefill_tok_s", "prefill", true),
               shared("against_prefill_tok_s", "before", true),
               shared("prefill_speedup", "speed-up", true),
               people("knob_changes", "knobs (vs the earlier best)", kKnobsWidth),
               programs("knobs"),
               programs("against_knobs"),
               programs("reused_left_out"),
               programs("replayed_left_out"),
               programs("against_reused_left_out"),
               programs("against_replayed_left_out")};
  // Each GPU kind's earlier best, the reference people read knobs against; each job's history row per kind, which
  // says what was left out.
  std::map<std::string, const db::Figures*> reference;
  for (const auto& r : c.rows)
    if (r.best && r.against) reference[r.gpu] = &*r.against;
  std::map<std::string, const db::HistoryRow*> mine, theirs;
  for (const auto& h : c.job_rows) mine[h.gpu] = &h;
  for (const auto& h : c.against_rows) theirs[h.gpu] = &h;
  const auto left_out = [](const std::map<std::string, const db::HistoryRow*>& rows, const std::string& gpu,
                           uint32_t db::HistoryRow::*what) {
    const auto it = rows.find(gpu);
    return it == rows.end() ? none() : count(it->second->*what);
  };
  for (const auto& r : c.rows) {
    const db::Figures none_measured;
    const db::Figures& a = r.job ? *r.job : none_measured;
    const db::Figures& b = r.against ? *r.against : none_measured;
    std::string changes = "-";
    if (r.job && reference.count(r.gpu)) {
      changes = knob_changes(nlohmann::json::parse(a.knobs, nullptr, false),
                             nlohmann::json::parse(reference[r.gpu]->knobs, nullptr, false));
      if (changes.empty()) changes = "(the same knobs)";
    }
    t.add({text(r.gpu),
           text(r.best ? "best" : "both measured"),
           r.job ? count(a.config) : none(),
           r.against ? count(b.config) : none(),
           r.job ? count(a.run) : none(),
           r.against ? count(b.run) : none(),
           time_cell(a.objective_ms),
           time_cell(b.objective_ms),
           speedup_cell(speedup_of_time(a.objective_ms, b.objective_ms)),
           time_cell(a.median_ms),
           time_cell(b.median_ms),
           speedup_cell(speedup_of_time(a.median_ms, b.median_ms)),
           rate_cell(a.prefill_tok_s),
           rate_cell(b.prefill_tok_s),
           speedup_cell(a.prefill_tok_s > 0 && b.prefill_tok_s > 0 ? a.prefill_tok_s / b.prefill_tok_s : 0),
           text(changes),
           r.job ? json_cell(a.knobs, "") : none(),
           r.against ? json_cell(b.knobs, "") : none(),
           left_out(mine, r.gpu, &db::HistoryRow::reused),
           left_out(mine, r.gpu, &db::HistoryRow::replayed),
           left_out(theirs, r.gpu, &db::HistoryRow::reused),
           left_out(theirs, r.gpu, &db::HistoryRow::replayed)});
  }
  t.notes.push_back(now + " against " + before +
                    ", on the runs each job measured itself: reused and replayed runs are left out, and nightly jobs "
                    "are never compared; speed-up: over 1, " +
                    now + " is faster");
  for (size_t i = 0; i < c.job_rows.size(); ++i) {
    const auto& h = c.job_rows[i];
    std::string line = h.gpu + ": " + now + " (" + h.checkpoint.substr(0, kShortDigest) + ", " + objective_text(h) +
                       ") measured " + thousands(h.measured) + ", left out " + left_out_text(h);
    for (const auto& e : c.against_rows) {
      if (e.gpu != h.gpu) continue;
      line += "; " + before + " (" + e.checkpoint.substr(0, kShortDigest) + ", " + objective_text(e) + ") measured " +
              thousands(e.measured) + ", left out " + left_out_text(e);
      if (objective_text(e) != objective_text(h))
        line += "; the objectives differ: their speed-up compares unlike figures";
      if (e.checkpoint != h.checkpoint) line += "; the checkpoints differ";
    }
    t.notes.push_back(line);
  }
  return t;
}

}  // namespace lt::cli
