// The worker's gRPC link: registration, leases, heartbeats, reports and checkpoint fetches on the wire.
#include <grpcpp/grpcpp.h>

#include <cmath>
#include <fstream>
#include <mutex>

#include "compiler/knobs.hpp"
#include "proto/calls.hpp"
#include "proto/tuning.grpc.pb.h"
#include "worker/worker.hpp"

namespace lt::worker {
namespace {
namespace pb = lanetune::v1;

template <class M>
M& versioned(M& m) {
  m.mutable_version()->set_major(1);
  m.mutable_version()->set_minor(0);
  return m;
}

void check(const grpc::Status& s) {
  if (s.ok()) return;
  // Worth trying again later: the coordinator unreachable or restarting, out of resources, or its disk full.
  const auto code = s.error_code();
  bool retry = code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED ||
               code == grpc::StatusCode::RESOURCE_EXHAUSTED || code == grpc::StatusCode::ABORTED;
  bool unknown = s.error_code() == grpc::StatusCode::NOT_FOUND && s.error_message().rfind("no worker", 0) == 0;
  throw LinkError("coordinator: " + s.error_message() + " (code " + std::to_string(int(s.error_code())) + ")", retry,
                  unknown);
}

LeasedPlan from_wire(const pb::Plan& w) {
  LeasedPlan p;
  p.plan = w.plan();
  p.lease = w.lease();
  p.job = w.job();
  p.checkpoint = w.checkpoint();
  p.checkpoint_size = w.checkpoint_size();
  p.gpu = w.gpu();
  try {
    p.knobs = knobs::Knobs::parse(w.knobs(), "the plan's knobs");
  } catch (const lt::Error& e) {
    p.unreadable = e.what();  // reported failed, never run with defaults
  }
  p.stage = w.stage();
  p.repetitions = w.repetitions();
  p.warmup = w.warmup();
  for (auto& q : w.prompts()) p.prompts.push_back({q.n_gen(), {q.tokens().begin(), q.tokens().end()}});
  p.stagger_seeds.assign(w.stagger_seeds().begin(), w.stagger_seeds().end());
  p.time_limit_s = w.time_limit_s();
  p.workload_prompt = w.workload().prompt();
  p.workload_gen = w.workload().gen();
  p.verify = w.verify();
  p.profile = w.profile();
  p.checkpoint_path = w.checkpoint_path();
  if (w.cutoff_on() == "workload" || w.cutoff_on() == "decode" || w.cutoff_on() == "prefill") p.cutoff_on = w.cutoff_on();
  p.cutoff_factor = std::isfinite(w.cutoff_factor()) && w.cutoff_factor() > 1 ? w.cutoff_factor() : 0;
  if (std::isfinite(w.best_ms()) && w.best_ms() > 0) p.best_ms->store(w.best_ms());
  return p;
}

// The link over one channel.
class GrpcLink : public Link {
 public:
  GrpcLink(const std::string& address, std::string token, const std::string& tls_ca) : token_(std::move(token)) {
    stub_ = pb::Coordinator::NewStub(lt::wire::channel(address, tls_ca));
  }

  std::pair<int64_t, double> register_worker(const std::string& name, const Gpu& gpu) override {
    pb::RegisterRequest r;
    versioned(r).set_name(name);
    r.set_gpu(gpu.kind);
    r.set_properties(gpu.properties().dump());
    r.set_environment(gpu.environment().dump());
    r.set_environment_key(gpu.environment_key());
    pb::RegisterReply out;
    check(stub_->Register(ctx(10).get(), r, &out));
    {
      std::lock_guard lock(key_m_);
      key_ = out.key();
    }
    return {out.worker(), out.lease_s()};
  }

  std::vector<LeasedPlan> lease(int64_t worker, uint32_t max, bool verifications_only) override {
    pb::LeaseRequest r;
    versioned(r).set_worker(worker);
    r.set_max_plans(max);
    r.set_verifications_only(verifications_only);
    r.set_key(key());
    pb::LeaseReply out;
    check(stub_->Lease(ctx(30).get(), r, &out));
    std::vector<LeasedPlan> v;
    for (auto& p : out.plans()) v.push_back(from_wire(p));
    return v;
  }

  std::vector<int64_t> heartbeat(int64_t worker, const std::vector<int64_t>& leases) override {
    pb::HeartbeatRequest r;
    versioned(r).set_worker(worker);
    for (auto l : leases) r.add_leases(l);
    r.set_key(key());
    pb::HeartbeatReply out;
    check(stub_->Heartbeat(ctx(10).get(), r, &out));
    return {out.lost().begin(), out.lost().end()};
  }

  bool report(int64_t worker, const LeasedPlan& p, const Result& x) override {
    pb::ReportRequest r;
    versioned(r).set_worker(worker);
    r.set_plan(p.plan);
    r.set_lease(p.lease);
    r.set_key(key());
    auto* o = r.mutable_result();
    o->set_knobs(p.knobs.dump());
    o->set_stage(p.stage);
    o->set_repetitions(p.repetitions);
    o->set_median_ms(x.median_ms);
    o->set_spread_ms(x.spread_ms);
    o->set_min_ms(x.min_ms);
    o->set_max_ms(x.max_ms);
    o->set_prefill_ms(x.prefill_ms);
    o->set_tok_per_s(x.tok_per_s);
    o->set_compile_s(x.compile_s);
    o->set_profile(x.profile.dump());
    o->set_logits_hash(x.logits_hash);
    o->set_rel_l2(x.rel_l2);
    o->set_argmax_agree(x.argmax_agree);
    o->set_tokens_equal(x.tokens_equal);
    o->set_stagger_equal(x.stagger_equal);
    o->set_valid(x.valid);
    o->set_reason(x.reason);
    o->set_failure(x.failure);
    o->set_error(x.error);
    o->set_environment(x.environment.dump());
    o->set_gpu(p.gpu);
    o->set_workload_ms(x.workload_ms);
    o->set_verified(x.verified);
    o->set_cost(x.cost.dump());
    pb::ReportReply out;
    check(stub_->Report(ctx(30).get(), r, &out));
    return out.recorded();
  }

  void fetch(const std::string& digest, const std::filesystem::path& path) override {
    pb::FetchRequest r;
    versioned(r).set_digest(digest);
    auto c = ctx(0);
    auto reader = stub_->FetchCheckpoint(c.get(), r);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw lt::Error("cannot write " + path.string());
    wire::receive_chunks(*reader, out);
    check(reader->Finish());
    out.close();
    if (!out) throw lt::Error("cannot write " + path.string());
  }

 private:
  std::unique_ptr<grpc::ClientContext> ctx(double timeout_s) const { return wire::context(token_, timeout_s); }

  // The key the last registration gave (the worker's calls may run on several threads, a re-registration among them).
  std::string key() const {
    std::lock_guard lock(key_m_);
    return key_;
  }

  std::string token_;
  std::unique_ptr<pb::Coordinator::Stub> stub_;
  mutable std::mutex key_m_;
  std::string key_;
};
}  // namespace

std::unique_ptr<Link> grpc_link(const std::string& address, const std::string& token, const std::string& tls_ca) {
  return std::make_unique<GrpcLink>(address, token, tls_ca);
}

}  // namespace lt::worker
