// The coordinator's view of its workers: who is registered, who holds leases, who has gone silent.
#include "coordinator/core.hpp"

namespace lt::coord {

const char* to_string(WorkerState s) {
  switch (s) {
    case WorkerState::Busy:
      return "busy";
    case WorkerState::Gone:
      return "gone";
    case WorkerState::Idle:
      break;
  }
  return "idle";
}

WorkerState parse_worker_state(const std::string& name) {
  for (auto s : {WorkerState::Busy, WorkerState::Idle, WorkerState::Gone})
    if (name == to_string(s)) return s;
  throw InvalidArgument("unknown worker state '" + name + "' (busy, idle, gone)");
}

std::vector<WorkerStatus> Coordinator::workers(const std::string& gpu, bool include_gone) {
  if (!gpu.empty() && !find_gpu_kind(gpu)) throw InvalidArgument("unknown GPU kind '" + gpu + "'");
  std::lock_guard lock(m_);
  const double at = now();
  const auto held = store_.leases_held();
  std::vector<WorkerStatus> v;
  for (auto& w : store_.workers()) {
    if (!gpu.empty() && w.gpu != gpu) continue;
    WorkerStatus s;
    s.seen_ago_s = std::max(0.0, at - w.last_seen);
    if (auto it = held.find(w.id); it != held.end()) s.leases = it->second;
    // A worker calls at least once a lease (its heartbeats, or a lease call a second when it holds nothing).
    s.state = s.seen_ago_s > o_.lease_s ? WorkerState::Gone : s.leases ? WorkerState::Busy : WorkerState::Idle;
    if (s.state == WorkerState::Gone && !include_gone) continue;
    w.key_hash.clear();  // (never leaves the coordinator)
    s.worker = std::move(w);
    v.push_back(std::move(s));
  }
  return v;
}

}  // namespace lt::coord
