// The core's records as wire messages and back.
#include "wire.hpp"

#include <chrono>

#include "coordinator/client.hpp"

namespace lt::coord::wire {

void to_wire(const db::Run& r, lanetune::v1::Result* o) {
  o->set_knobs(r.knobs);
  o->set_stage(r.stage);
  o->set_repetitions(r.repetitions);
  o->set_median_ms(r.median_ms);
  o->set_spread_ms(r.spread_ms);
  o->set_min_ms(r.min_ms);
  o->set_max_ms(r.max_ms);
  o->set_prefill_ms(r.prefill_ms);
  o->set_tok_per_s(r.tok_per_s);
  o->set_profile(r.profile);
  o->set_logits_hash(r.logits_hash);
  o->set_rel_l2(r.rel_l2);
  o->set_argmax_agree(r.argmax_agree);
  o->set_tokens_equal(r.tokens_equal);
  o->set_stagger_equal(r.stagger_equal);
  o->set_valid(r.valid);
  o->set_reason(r.reason);
  o->set_failure(r.failure);
  o->set_error(r.error);
  o->set_environment(r.environment);
  o->set_gpu(r.gpu);
  o->set_worker(r.worker_name);
  o->set_compile_s(r.compile_s);
  o->set_workload_ms(r.workload_ms);
  o->set_verified(r.verified);
  o->set_cost(r.cost);
  o->set_origin(r.origin);
  o->set_objective_ms(r.objective_ms);
  o->set_recorded_at(r.recorded_at);
  o->set_run(r.id);
  o->set_config(r.config);
  o->set_prefill_tok_s(r.prefill_tok_s);
  o->set_verify(r.verify);
  o->set_reused_from(r.reused_from);
}

db::Run from_wire(const lanetune::v1::Result& o) {
  db::Run r;
  r.knobs = o.knobs();
  r.stage = o.stage();
  r.repetitions = o.repetitions();
  r.median_ms = o.median_ms();
  r.spread_ms = o.spread_ms();
  r.min_ms = o.min_ms();
  r.max_ms = o.max_ms();
  r.prefill_ms = o.prefill_ms();
  r.tok_per_s = o.tok_per_s();
  r.profile = o.profile();
  r.logits_hash = o.logits_hash();
  r.rel_l2 = o.rel_l2();
  r.argmax_agree = o.argmax_agree();
  r.tokens_equal = o.tokens_equal();
  r.stagger_equal = o.stagger_equal();
  r.valid = o.valid();
  r.reason = o.reason();
  r.failure = o.failure();
  r.error = o.error();
  r.environment = o.environment();
  r.gpu = o.gpu();
  r.worker_name = o.worker();
  r.compile_s = o.compile_s();
  r.workload_ms = o.workload_ms();
  r.verified = o.verified();
  r.cost = o.cost();
  r.origin = o.origin();
  r.objective_ms = o.objective_ms();
  r.recorded_at = o.recorded_at();
  r.id = o.run();
  r.config = o.config();
  r.prefill_tok_s = o.prefill_tok_s();
  r.verify = o.verify();
  r.reused_from = o.reused_from();
  return r;
}

void to_wire(const JobStatus& s, lanetune::v1::JobStatus* o) {
  versioned(*o);
  o->set_job(s.job.id);
  o->set_state(s.job.state);
  o->set_checkpoint(s.job.checkpoint);
  o->set_strategy(s.job.strategy);
  o->set_time_left_s(s.time_left_s);
  o->set_message(s.job.message);
  o->set_created_at(s.job.created_at);
  o->set_objective(s.job.objective);
  o->mutable_workload()->set_prompt(s.job.workload_prompt);
  o->mutable_workload()->set_gen(s.job.workload_gen);
  o->set_checkpoint_name(s.checkpoint_name);
  o->set_context(s.job.context);
  for (auto& p : s.gpus) {
    auto* g = o->add_gpus();
    g->set_gpu(p.gpu);
    g->set_planned(p.planned);
    g->set_done(p.done);
    g->set_valid(p.valid);
    g->set_failed(p.failed);
    g->set_best_ms(p.best_ms);
    g->set_best_knobs(p.best_knobs);
    g->set_measured(p.measured);
    g->set_verified(p.verified);
    g->set_open(p.open);
    g->set_best_objective_ms(p.best_objective_ms);
    g->set_best_prefill_tok_s(p.best_prefill_tok_s);
    g->set_best_workload_ms(p.best_workload_ms);
    g->set_note(p.note);
    g->set_measuring(p.measuring);
  }
}

JobStatus from_wire(const lanetune::v1::JobStatus& o) {
  JobStatus s;
  s.job.id = o.job();
  s.job.state = o.state();
  s.job.checkpoint = o.checkpoint();
  s.job.strategy = o.strategy();
  s.job.message = o.message();
  s.job.created_at = o.created_at();
  s.job.objective = o.objective();
  s.job.workload_prompt = o.workload().prompt();
  s.job.workload_gen = o.workload().gen();
  s.job.context = o.context();
  s.checkpoint_name = o.checkpoint_name();
  s.time_left_s = o.time_left_s();
  for (auto& g : o.gpus()) {
    db::Progress p;
    p.gpu = g.gpu();
    p.planned = g.planned();
    p.done = g.done();
    p.valid = g.valid();
    p.failed = g.failed();
    p.best_ms = g.best_ms();
    p.best_knobs = g.best_knobs();
    p.measured = g.measured();
    p.verified = g.verified();
    p.open = g.open();
    p.best_objective_ms = g.best_objective_ms();
    p.best_prefill_tok_s = g.best_prefill_tok_s();
    p.best_workload_ms = g.best_workload_ms();
    p.note = g.note();
    p.measuring = g.measuring();
    p.strategy = o.strategy();
    s.job.gpus.push_back(p.gpu);
    s.gpus.push_back(p);
  }
  return s;
}

void to_wire(const WorkerStatus& s, lanetune::v1::WorkerInfo* o) {
  o->set_worker(s.worker.id);
  o->set_name(s.worker.name);
  o->set_gpu(s.worker.gpu);
  o->set_state(to_string(s.state));
  o->set_last_seen(s.worker.last_seen);
  o->set_seen_ago_s(s.seen_ago_s);
  o->set_leases(s.leases);
  o->set_registered_at(s.worker.registered_at);
}

WorkerStatus from_wire(const lanetune::v1::WorkerInfo& o) {
  WorkerStatus s;
  s.worker.id = o.worker();
  s.worker.name = o.name();
  s.worker.gpu = o.gpu();
  s.state = parse_worker_state(o.state());
  s.worker.last_seen = o.last_seen();
  s.seen_ago_s = o.seen_ago_s();
  s.leases = o.leases();
  s.worker.registered_at = o.registered_at();
  return s;
}

namespace {

void to_wire(const db::Figures& f, lanetune::v1::Figures* o) {
  o->set_run(f.run);
  o->set_config(f.config);
  o->set_key(f.key);
  o->set_knobs(f.knobs);
  o->set_verified(f.verified);
  o->set_objective_ms(f.objective_ms);
  o->set_median_ms(f.median_ms);
  o->set_prefill_tok_s(f.prefill_tok_s);
  o->set_recorded_at(f.recorded_at);
}

db::Figures from_wire(const lanetune::v1::Figures& o) {
  return {o.run(),          o.config(),    o.key(),           o.knobs(),      o.verified(),
          o.objective_ms(), o.median_ms(), o.prefill_tok_s(), o.recorded_at()};
}

}  // namespace

void to_wire(const db::HistoryRow& h, lanetune::v1::HistoryEntry* o) {
  o->set_job(h.job);
  o->set_gpu(h.gpu);
  o->set_checkpoint(h.checkpoint);
  o->set_checkpoint_name(h.checkpoint_name);
  o->set_state(h.state);
  o->set_strategy(h.strategy);
  o->set_objective(h.objective);
  o->mutable_workload()->set_prompt(h.workload_prompt);
  o->mutable_workload()->set_gen(h.workload_gen);
  o->set_context(h.context);
  o->set_created_at(h.created_at);
  o->set_runs(h.runs);
  o->set_measured(h.measured);
  o->set_reused(h.reused);
  o->set_replayed(h.replayed);
  if (h.best) to_wire(*h.best, o->mutable_best());
}

db::HistoryRow from_wire(const lanetune::v1::HistoryEntry& o) {
  db::HistoryRow h;
  h.job = o.job();
  h.gpu = o.gpu();
  h.checkpoint = o.checkpoint();
  h.checkpoint_name = o.checkpoint_name();
  h.state = o.state();
  h.strategy = o.strategy();
  h.objective = o.objective();
  h.workload_prompt = o.workload().prompt();
  h.workload_gen = o.workload().gen();
  h.context = o.context();
  h.created_at = o.created_at();
  h.runs = o.runs();
  h.measured = o.measured();
  h.reused = o.reused();
  h.replayed = o.replayed();
  if (o.has_best()) h.best = from_wire(o.best());
  return h;
}

void to_wire(const Comparison& c, lanetune::v1::Comparison* o) {
  versioned(*o).set_job(c.job);
  o->set_against(c.against);
  for (auto& h : c.job_rows) to_wire(h, o->add_job_entries());
  for (auto& h : c.against_rows) to_wire(h, o->add_against_entries());
  for (auto& r : c.rows) {
    auto* w = o->add_rows();
    w->set_gpu(r.gpu);
    w->set_best(r.best);
    if (r.job) to_wire(*r.job, w->mutable_job());
    if (r.against) to_wire(*r.against, w->mutable_against());
  }
}

Comparison from_wire(const lanetune::v1::Comparison& o) {
  Comparison c;
  c.job = o.job();
  c.against = o.against();
  for (auto& h : o.job_entries()) c.job_rows.push_back(from_wire(h));
  for (auto& h : o.against_entries()) c.against_rows.push_back(from_wire(h));
  for (auto& w : o.rows()) {
    ComparedRow r{w.gpu(), w.best(), std::nullopt, std::nullopt};
    if (w.has_job()) r.job = from_wire(w.job());
    if (w.has_against()) r.against = from_wire(w.against());
    c.rows.push_back(std::move(r));
  }
  return c;
}

namespace {
// The name of a gRPC status code.
const char* code_name(grpc::StatusCode c) {
  static const char* const names[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  auto i = static_cast<size_t>(c);
  return i < std::size(names) ? names[i] : "ERROR";
}
}  // namespace

void check(const grpc::Status& s, const std::string& address) {
  if (s.ok()) return;
  std::string msg = s.error_message().empty() ? "(no message)" : s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE)
    msg = "cannot reach the coordinator at " + address + " (" + msg + "); is `lane-tune coordinator` running?";
  throw CallError(code_name(s.error_code()), msg);
}

}  // namespace lt::coord::wire
