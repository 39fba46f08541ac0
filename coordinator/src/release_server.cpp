// The Releases service over gRPC: each RPC checks the token and the version, validates, and calls the releases' core.
#include "release_server.hpp"

#include "coordinator/log.hpp"
#include "proto/release.grpc.pb.h"
#include "serve.hpp"
#include "wire.hpp"

namespace lt::coord {
namespace {
namespace pb = lanetune::v1;
using grpc::ServerContext;
using grpc::StatusCode;

void to_wire(const NightRow& r, pb::NightRow* o) {
  o->set_release(r.release);
  o->set_gpu(r.gpu);
  o->set_job(r.job);
  o->set_baseline_ms(r.baseline_ms);
  o->set_baseline_spread_ms(r.baseline_spread_ms);
  o->set_median_ms(r.median_ms);
  o->set_spread_ms(r.spread_ms);
  o->set_repetitions(r.repetitions);
  o->set_change_pct(r.change_pct);
  o->set_verdict(r.verdict);
  o->set_reason(r.reason);
  o->set_logits_hash(r.logits_hash);
  o->set_night(r.night);
  o->set_started_at(r.started_at);
}

void to_wire(const Night& n, pb::Night* o) {
  wire::versioned(*o).set_night(n.night);
  for (auto& r : n.rows) to_wire(r, o->add_rows());
}

// The service: a translation layer, no decisions of its own.
class ReleaseService final : public pb::Releases::Service {
 public:
  ReleaseService(Coordinator& core, std::string token) : core_(core), token_(std::move(token)) {}

  grpc::Status Candidate(ServerContext* ctx, const pb::CandidateRequest* r, pb::ReleaseCandidate* out) override {
    return call(ctx, r, [&] {
      auto c = core_.candidate(r->job(), r->gpu());
      wire::versioned(*out).set_job(c.job);
      out->set_gpu(c.gpu);
      out->set_run(c.run.id);
      wire::to_wire(c.run, out->mutable_result());
      out->set_checkpoint(c.checkpoint.digest);
      out->set_checkpoint_size(c.checkpoint.size);
      out->set_checkpoint_name(c.checkpoint.name);
      out->set_checkpoint_architecture(c.checkpoint.architecture);
      out->set_checkpoint_path(c.checkpoint.path);
      out->set_prompts(c.prompts);
      out->set_arch(c.arch);
    });
  }

  grpc::Status RecordRelease(ServerContext* ctx, const pb::RecordReleaseRequest* r, pb::ReleaseRef* out) override {
    return call(ctx, r, [&] {
      int64_t id = core_.record(r->job(), r->gpu(), r->run(), r->directory(), r->manifest());
      wire::versioned(*out).set_release(id);
      log(1, "release_recorded",
          {{"release", std::to_string(id)}, {"job", std::to_string(r->job())}, {"gpu", r->gpu()}});
    });
  }

  grpc::Status ListReleases(ServerContext* ctx, const pb::ListReleasesRequest* r, pb::ReleaseList* out) override {
    return call(ctx, r, [&] {
      wire::versioned(*out);
      for (auto& x : core_.list()) {
        auto* o = out->add_releases();
        o->set_release(x.id);
        o->set_job(x.job);
        o->set_gpu(x.gpu);
        o->set_checkpoint(x.checkpoint);
        o->set_knobs(x.knobs);
        o->set_median_ms(x.median_ms);
        o->set_spread_ms(x.spread_ms);
        o->set_repetitions(x.repetitions);
        o->set_logits_hash(x.logits_hash);
        o->set_directory(x.directory);
        o->set_created_at(x.created_at);
      }
    });
  }

  grpc::Status StartNight(ServerContext* ctx, const pb::StartNightRequest* r, pb::Night* out) override {
    return call(ctx, r, [&] {
      auto n = core_.start_night({r->releases().begin(), r->releases().end()}, {r->gpus().begin(), r->gpus().end()});
      to_wire(n, out);
      log(1, "night_started", {{"night", std::to_string(n.night)}, {"releases", std::to_string(n.rows.size())}});
    });
  }

  grpc::Status ListNights(ServerContext* ctx, const pb::NightsRequest* r, pb::NightList* out) override {
    return call(ctx, r, [&] {
      wire::versioned(*out);
      for (auto& row : core_.nights(r->job())) to_wire(row, out->add_rows());
    });
  }

  grpc::Status JudgeNight(ServerContext* ctx, const pb::JudgeNightRequest* r, pb::Night* out) override {
    return call(ctx, r, [&] { to_wire(core_.judge_night(r->night(), {r->slower_pct(), r->noise()}), out); });
  }

 private:
  // Runs one RPC's body: the token, the version, the status codes (serve.hpp).
  template <class Req, class F>
  grpc::Status call(ServerContext* ctx, const Req* req, F&& body) {
    return serve::call(ctx, token_, req, std::forward<F>(body));
  }

  Releases core_;
  std::string token_;
};
}  // namespace

std::unique_ptr<grpc::Service> release_service(Coordinator& core, const std::string& token) {
  return std::make_unique<ReleaseService>(core, token);
}

}  // namespace lt::coord
