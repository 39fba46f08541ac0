// The service's counts for its metrics: jobs and plans by state, live leases, workers by GPU kind and state.
#include "db/store.hpp"

namespace lt::db {

Tally Store::tally(double now, double live_since) {
  Tally t;
  for (const char* s : {"running", "done", "cancelled", "failed"}) t.jobs_by_state[s] = 0;
  for (const char* s : {"pending", "leased", "done", "skipped"}) t.plans_by_state[s] = 0;
  for (auto s = c_.prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state"); s.next();)
    t.jobs_by_state[s.text(0)] = s.i64(1);
  // (plans_by_deadline covers the state, so this counts from the index, not the table.)
  for (auto s = c_.prepare("SELECT state, COUNT(*) FROM plans GROUP BY state"); s.next();)
    t.plans_by_state[s.text(0)] = s.i64(1);
  {
    auto s = c_.prepare("SELECT COUNT(*) FROM plans WHERE state = 'leased' AND deadline >= ?1");
    s.bind(1, now);
    if (s.next()) t.leases_held = s.i64(0);
    s.exec();
  }
  auto s = c_.prepare(
      "SELECT w.gpu, CASE WHEN EXISTS (SELECT 1 FROM plans p WHERE p.state = 'leased' AND p.deadline >= ?1 AND "
      "p.worker = w.id) THEN 'busy' WHEN w.last_seen >= ?2 THEN 'idle' ELSE 'gone' END, COUNT(*) FROM workers w "
      "GROUP BY 1, 2");
  s.bind(1, now).bind(2, live_since);
  while (s.next()) t.workers[s.text(0)][s.text(1)] = s.i64(2);
  return t;
}

}  // namespace lt::db
