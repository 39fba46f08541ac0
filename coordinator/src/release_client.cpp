// The Releases client: each call a gRPC request with the token, the version and a deadline.
#include "coordinator/release_client.hpp"

#include <grpcpp/grpcpp.h>

#include <fstream>

#include "proto/release.grpc.pb.h"
#include "proto/tuning.grpc.pb.h"
#include "wire.hpp"

namespace lt::coord {
namespace pb = lanetune::v1;

namespace {
NightRow from_wire(const pb::NightRow& o) {
  NightRow r;
  r.release = o.release();
  r.gpu = o.gpu();
  r.job = o.job();
  r.baseline_ms = o.baseline_ms();
  r.baseline_spread_ms = o.baseline_spread_ms();
  r.median_ms = o.median_ms();
  r.spread_ms = o.spread_ms();
  r.repetitions = o.repetitions();
  r.change_pct = o.change_pct();
  r.verdict = o.verdict();
  r.reason = o.reason();
  r.logits_hash = o.logits_hash();
  r.night = o.night();
  r.started_at = o.started_at();
  return r;
}

Night from_wire(const pb::Night& o) {
  Night n{o.night(), {}};
  for (auto& r : o.rows()) n.rows.push_back(from_wire(r));
  return n;
}
}  // namespace

// The channel, the stubs and what every call carries.
struct ReleaseClient::Impl {
  std::string address, token;
  double timeout_s;
  std::unique_ptr<pb::Releases::Stub> releases;
  std::unique_ptr<pb::Coordinator::Stub> coordinator;

  std::unique_ptr<grpc::ClientContext> context(double timeout) const { return wire::context(token, timeout); }
  void check(const grpc::Status& s) const { wire::check(s, address); }
};

ReleaseClient::ReleaseClient(const std::string& address, const std::string& token, double timeout_s,
                             const std::string& tls_ca)
    : impl_(std::make_unique<Impl>()) {
  impl_->address = address;
  impl_->token = token;
  impl_->timeout_s = timeout_s;
  auto channel = lt::wire::channel(address, tls_ca);
  impl_->releases = pb::Releases::NewStub(channel);
  impl_->coordinator = pb::Coordinator::NewStub(channel);
}

ReleaseClient::~ReleaseClient() = default;

Candidate ReleaseClient::candidate(int64_t job, const std::string& gpu) {
  pb::CandidateRequest r;
  wire::versioned(r).set_job(job);
  r.set_gpu(gpu);
  pb::ReleaseCandidate o;
  impl_->check(impl_->releases->Candidate(impl_->context(impl_->timeout_s).get(), r, &o));
  Candidate c;
  c.job = o.job();
  c.gpu = o.gpu();
  c.run = wire::from_wire(o.result());
  c.run.id = o.run();
  c.run.job = o.job();
  c.checkpoint = {o.checkpoint(), o.checkpoint_path(), o.checkpoint_size(), o.checkpoint_architecture(),
                  o.checkpoint_name()};
  c.prompts = o.prompts();
  c.arch = o.arch();
  return c;
}

int64_t ReleaseClient::record(int64_t job, const std::string& gpu, int64_t run, const std::string& directory,
                              const std::string& manifest) {
  pb::RecordReleaseRequest r;
  wire::versioned(r).set_job(job);
  r.set_gpu(gpu);
  r.set_run(run);
  r.set_directory(directory);
  r.set_manifest(manifest);
  pb::ReleaseRef o;
  impl_->check(impl_->releases->RecordRelease(impl_->context(impl_->timeout_s).get(), r, &o));
  return o.release();
}

std::vector<Release> ReleaseClient::list() {
  pb::ListReleasesRequest r;
  wire::versioned(r);
  pb::ReleaseList o;
  impl_->check(impl_->releases->ListReleases(impl_->context(impl_->timeout_s).get(), r, &o));
  std::vector<Release> v;
  for (auto& x : o.releases()) {
    Release e;
    e.id = x.release();
    e.job = x.job();
    e.gpu = x.gpu();
    e.checkpoint = x.checkpoint();
    e.knobs = x.knobs();
    e.median_ms = x.median_ms();
    e.spread_ms = x.spread_ms();
    e.repetitions = x.repetitions();
    e.logits_hash = x.logits_hash();
    e.directory = x.directory();
    e.created_at = x.created_at();
    v.push_back(std::move(e));
  }
  return v;
}

Night ReleaseClient::start_night(const std::vector<int64_t>& releases, const std::vector<std::string>& gpus) {
  pb::StartNightRequest r;
  wire::versioned(r);
  for (auto id : releases) r.add_releases(id);
  for (auto& g : gpus) r.add_gpus(g);
  pb::Night o;
  impl_->check(impl_->releases->StartNight(impl_->context(impl_->timeout_s * 4).get(), r, &o));
  return from_wire(o);
}

Night ReleaseClient::judge_night(int64_t night, const VerdictRule& rule) {
  pb::JudgeNightRequest r;
  wire::versioned(r).set_night(night);
  r.set_slower_pct(rule.slower_pct);
  r.set_noise(rule.noise);
  pb::Night o;
  impl_->check(impl_->releases->JudgeNight(impl_->context(impl_->timeout_s).get(), r, &o));
  return from_wire(o);
}

std::vector<NightRow> ReleaseClient::nights(int64_t job) {
  pb::NightsRequest r;
  wire::versioned(r).set_job(job);
  pb::NightList o;
  impl_->check(impl_->releases->ListNights(impl_->context(impl_->timeout_s).get(), r, &o));
  std::vector<NightRow> v;
  for (auto& row : o.rows()) v.push_back(from_wire(row));
  return v;
}

void ReleaseClient::fetch_checkpoint(const std::string& digest, const std::filesystem::path& path) {
  pb::FetchRequest r;
  wire::versioned(r).set_digest(digest);
  auto ctx = impl_->context(0);
  auto reader = impl_->coordinator->FetchCheckpoint(ctx.get(), r);
  auto part = path;
  part += ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    if (!out) throw lt::Error("cannot write " + part.string());
    wire::receive_chunks(*reader, out);
    impl_->check(reader->Finish());
    if (!out.flush()) throw lt::Error("cannot write " + part.string());
  }
  std::filesystem::rename(part, path);
}

}  // namespace lt::coord
