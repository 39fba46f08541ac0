// The job history's core: the history's rows as the database's job_history view has them, and two jobs compared on
// the configurations each measured itself.
#include "coordinator/history.hpp"

#include <algorithm>
#include <map>

namespace lt::coord {
namespace {

// Throws InvalidArgument for a GPU kind other than the known ones (empty: every kind, accepted).
void check_gpu(const std::string& gpu) {
  if (!gpu.empty() && !find_gpu_kind(gpu)) throw InvalidArgument("unknown GPU kind '" + gpu + "'");
}

// Throws InvalidArgument unless `digest` is a content digest or its first digits: lowercase hex, at most 32.
void check_digest_prefix(const std::string& digest) {
  const bool hex = std::all_of(digest.begin(), digest.end(),
                               [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); });
  if (!hex || digest.size() > 32)
    throw InvalidArgument(
        "a checkpoint is named by its content digest or its first digits (lowercase hex, at most "
        "32), not '" +
        digest + "'");
}

bool tuned(const db::Job& j, const std::string& gpu) {
  return std::find(j.gpus.begin(), j.gpus.end(), gpu) != j.gpus.end();
}

// The job, or NotFound; InvalidArgument for a night's job (its runs re-measure a release: never compared).
db::Job comparable_job(db::Store& st, int64_t id) {
  auto j = st.job(id);
  if (!j) throw NotFound("no job " + std::to_string(id));
  if (st.nightly_job(id))
    throw InvalidArgument("job " + std::to_string(id) +
                          " is a nightly run of a release: compare the job that tuned the release instead");
  return *j;
}

// The latest job before `j` on its checkpoint that tuned one of the kinds asked for, never a nightly one (the
// history holds none); NotFound when there is none.
int64_t earlier_job(db::Store& st, const db::Job& j, const std::string& gpu) {
  const auto rows = st.history({j.checkpoint, gpu, 0});
  for (auto it = rows.rbegin(); it != rows.rend(); ++it)
    if (it->job < j.id && tuned(j, it->gpu)) return it->job;
  throw NotFound("no job before " + std::to_string(j.id) + " tuned checkpoint " + j.checkpoint +
                 (gpu.empty() ? "" : " for " + gpu) + ": name one with --against");
}

}  // namespace

std::vector<db::HistoryRow> JobHistory::list(const db::HistoryFilter& f) {
  check_gpu(f.gpu);
  check_digest_prefix(f.checkpoint);
  return core_.with_store([&](db::Store& st, double) { return st.history(f); });
}

Comparison JobHistory::compare(int64_t job, int64_t against, const std::string& gpu) {
  check_gpu(gpu);
  if (job == against) throw InvalidArgument("job " + std::to_string(job) + " is compared with another job, not itself");
  return core_.with_store([&](db::Store& st, double) {
    const db::Job j = comparable_job(st, job);
    if (!gpu.empty() && !tuned(j, gpu)) throw FailedPrecondition("job " + std::to_string(job) + " did not tune " + gpu);
    const db::Job a = comparable_job(st, against ? against : earlier_job(st, j, gpu));
    Comparison c;
    c.job = j.id;
    c.against = a.id;
    for (const auto& kind : j.gpus) {
      if (!tuned(a, kind) || (!gpu.empty() && kind != gpu)) continue;
      const auto mine = st.history({"", kind, j.id}), theirs = st.history({"", kind, a.id});
      c.job_rows.insert(c.job_rows.end(), mine.begin(), mine.end());
      c.against_rows.insert(c.against_rows.end(), theirs.begin(), theirs.end());
      ComparedRow best{kind, true, std::nullopt, std::nullopt};
      if (!mine.empty()) best.job = mine.front().best;
      if (!theirs.empty()) best.against = theirs.front().best;
      c.rows.push_back(best);
      std::map<std::string, db::Figures> before;
      for (auto& f : st.measured_configurations(a.id, kind)) before.emplace(f.key, f);
      for (auto& f : st.measured_configurations(j.id, kind))
        if (auto it = before.find(f.key); it != before.end()) c.rows.push_back({kind, false, f, it->second});
    }
    if (c.rows.empty())
      throw FailedPrecondition(gpu.empty() ? "jobs " + std::to_string(j.id) + " and " + std::to_string(a.id) +
                                                 " tuned no GPU kind in common"
                                           : "job " + std::to_string(a.id) + " did not tune " + gpu);
    return c;
  });
}

}  // namespace lt::coord
