// The job history's queries: each job's search per GPU kind with its best run of those it measured itself, and the
// configurations a job measured itself, as a comparison of two jobs reads them.
#include "db/store.hpp"

namespace lt::db {
namespace {

constexpr const char* kFigureCols =
    "SELECT d.id, d.config, p.key, d.knobs, d.verified, d.objective_ms, d.median_ms, d.prefill_tok_s, d.recorded_at "
    "FROM run_details d JOIN run_provenance p ON p.run = d.id";

Figures read_figures(Stmt& s) {
  Figures f;
  f.run = s.i64(0);
  f.config = s.i64(1);
  f.key = s.text(2);
  f.knobs = s.text(3);
  f.verified = s.i64(4) != 0;
  f.objective_ms = s.f64(5);
  f.median_ms = s.f64(6);
  f.prefill_tok_s = s.f64(7);
  f.recorded_at = s.f64(8);
  return f;
}

}  // namespace

std::vector<HistoryRow> Store::history(const HistoryFilter& f) {
  auto s = c_.prepare(
      "SELECT job, gpu, checkpoint, checkpoint_name, state, strategy, objective, workload_prompt, workload_gen, "
      "context, created_at, runs, measured, reused, replayed, best_run FROM job_history "
      "WHERE (?1 = '' OR substr(checkpoint, 1, length(?1)) = ?1) AND (?2 = '' OR gpu = ?2) AND (?3 = 0 OR job = ?3) "
      "ORDER BY created_at, job, gpu");
  s.bind(1, f.checkpoint).bind(2, f.gpu).bind(3, f.job);
  std::vector<HistoryRow> v;
  std::vector<int64_t> best;
  while (s.next()) {
    HistoryRow h;
    h.job = s.i64(0);
    h.gpu = s.text(1);
    h.checkpoint = s.text(2);
    h.checkpoint_name = s.text(3);
    h.state = s.text(4);
    h.strategy = s.text(5);
    h.objective = s.text(6);
    h.workload_prompt = uint32_t(s.i64(7));
    h.workload_gen = uint32_t(s.i64(8));
    h.context = uint32_t(s.i64(9));
    h.created_at = s.f64(10);
    h.runs = uint32_t(s.i64(11));
    h.measured = uint32_t(s.i64(12));
    h.reused = uint32_t(s.i64(13));
    h.replayed = uint32_t(s.i64(14));
    best.push_back(s.is_null(15) ? 0 : s.i64(15));
    v.push_back(std::move(h));
  }
  auto one = c_.prepare(std::string(kFigureCols) + " WHERE d.id = ?1");
  for (size_t i = 0; i < v.size(); ++i) {
    if (best[i] == 0) continue;
    one.bind(1, best[i]);
    if (one.next()) v[i].best = read_figures(one);
    one.exec();
  }
  return v;
}

std::vector<Figures> Store::measured_configurations(int64_t job, const std::string& gpu) {
  auto s = c_.prepare(std::string(kFigureCols) +
                      " WHERE d.id IN (SELECT run FROM (SELECT p.run, ROW_NUMBER() OVER (PARTITION BY p.key "
                      "ORDER BY r.verified DESC, r.stage DESC, r.objective_ms, r.id) AS rank "
                      "FROM run_provenance p JOIN runs r ON r.id = p.run WHERE p.job = ?1 AND p.gpu = ?2 "
                      "AND p.provenance = 'measured' AND r.valid = 1) WHERE rank = 1) ORDER BY d.objective_ms, d.id");
  s.bind(1, job).bind(2, gpu);
  std::vector<Figures> v;
  while (s.next()) v.push_back(read_figures(s));
  return v;
}

bool Store::nightly_job(int64_t job) {
  auto s = c_.prepare("SELECT EXISTS (SELECT 1 FROM nightly_runs WHERE job = ?1)");
  s.bind(1, job);
  const bool nightly = s.next() && s.i64(0) != 0;
  s.exec();
  return nightly;
}

}  // namespace lt::db
