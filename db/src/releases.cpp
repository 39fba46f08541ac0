// The releases' and nights' queries: frozen winners, and the rows of each night that re-measures them.
#include "db/store.hpp"

namespace lt::db {
namespace {

constexpr const char* kReleaseCols =
    "SELECT id, job, gpu, run, checkpoint, knobs, prompts, median_ms, spread_ms, repetitions, logits_hash, directory, "
    "manifest, created_at FROM releases";

Release read_release(Stmt& s) {
  Release r;
  r.id = s.i64(0);
  r.job = s.i64(1);
  r.gpu = s.text(2);
  r.run = s.i64(3);
  r.checkpoint = s.text(4);
  r.knobs = s.text(5);
  r.prompts = s.text(6);
  r.median_ms = s.f64(7);
  r.spread_ms = s.f64(8);
  r.repetitions = uint32_t(s.i64(9));
  r.logits_hash = s.text(10);
  r.directory = s.text(11);
  r.manifest = s.text(12);
  r.created_at = s.f64(13);
  return r;
}

constexpr const char* kNightCols =
    "SELECT release, gpu, job, baseline_ms, baseline_spread_ms, median_ms, spread_ms, repetitions, change_pct, "
    "verdict, reason, logits_hash, night, started_at FROM nightly_runs";

NightRow read_night_row(Stmt& s) {
  NightRow r;
  r.release = s.i64(0);
  r.gpu = s.text(1);
  r.job = s.i64(2);
  r.baseline_ms = s.f64(3);
  r.baseline_spread_ms = s.f64(4);
  r.median_ms = s.f64(5);
  r.spread_ms = s.f64(6);
  r.repetitions = uint32_t(s.i64(7));
  r.change_pct = s.f64(8);
  r.verdict = s.text(9);
  r.reason = s.text(10);
  r.logits_hash = s.text(11);
  r.night = s.i64(12);
  r.started_at = s.f64(13);
  return r;
}

}  // namespace

int64_t Store::insert_release(const Release& r) {
  c_.prepare(
        "INSERT INTO releases (job, gpu, run, checkpoint, knobs, prompts, median_ms, spread_ms, repetitions, "
        "logits_hash, directory, manifest, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)")
      .bind(1, r.job)
      .bind(2, r.gpu)
      .bind(3, r.run)
      .bind(4, r.checkpoint)
      .bind(5, r.knobs)
      .bind(6, r.prompts)
      .bind(7, r.median_ms)
      .bind(8, r.spread_ms)
      .bind(9, r.repetitions)
      .bind(10, r.logits_hash)
      .bind(11, r.directory)
      .bind(12, r.manifest)
      .bind(13, r.created_at)
      .exec();
  return c_.last_insert_id();
}

std::vector<Release> Store::releases() {
  auto s = c_.prepare(std::string(kReleaseCols) + " ORDER BY id");
  std::vector<Release> v;
  while (s.next()) v.push_back(read_release(s));
  return v;
}

std::optional<Release> Store::release(int64_t id) {
  auto s = c_.prepare(std::string(kReleaseCols) + " WHERE id = ?1");
  s.bind(1, id);
  if (!s.next()) return std::nullopt;
  Release r = read_release(s);
  s.exec();
  return r;
}

int64_t Store::next_night() {
  auto s = c_.prepare("SELECT COALESCE(MAX(night), 0) + 1 FROM nightly_runs");
  int64_t night = s.next() ? s.i64(0) : 1;
  s.exec();
  return night;
}

void Store::insert_night_row(int64_t night, const NightRow& row, double at) {
  c_.prepare(
        "INSERT INTO nightly_runs (night, release, gpu, job, baseline_ms, baseline_spread_ms, verdict, started_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7)")
      .bind(1, night)
      .bind(2, row.release)
      .bind(3, row.gpu)
      .bind(4, row.job)
      .bind(5, row.baseline_ms)
      .bind(6, row.baseline_spread_ms)
      .bind(7, at)
      .exec();
}

std::vector<NightRow> Store::night_rows(int64_t night) {
  auto s = c_.prepare(std::string(kNightCols) + " WHERE night = ?1 ORDER BY release, gpu");
  s.bind(1, night);
  std::vector<NightRow> v;
  while (s.next()) v.push_back(read_night_row(s));
  return v;
}

std::vector<NightRow> Store::release_nights(int64_t job) {
  auto s = c_.prepare(std::string(kNightCols) +
                      " WHERE release IN (SELECT id FROM releases WHERE job = ?1) ORDER BY release, night, gpu");
  s.bind(1, job);
  std::vector<NightRow> v;
  while (s.next()) v.push_back(read_night_row(s));
  return v;
}

void Store::judge_night_row(int64_t night, const NightRow& row, double at) {
  c_.prepare(
        "UPDATE nightly_runs SET median_ms = ?1, spread_ms = ?2, repetitions = ?3, change_pct = ?4, logits_hash = ?5, "
        "verdict = ?6, reason = ?7, judged_at = ?8 WHERE night = ?9 AND release = ?10 AND gpu = ?11")
      .bind(1, row.median_ms)
      .bind(2, row.spread_ms)
      .bind(3, row.repetitions)
      .bind(4, row.change_pct)
      .bind(5, row.logits_hash)
      .bind(6, row.verdict)
      .bind(7, row.reason)
      .bind(8, at)
      .bind(9, night)
      .bind(10, row.release)
      .bind(11, row.gpu)
      .exec();
}

}  // namespace lt::db
