// The CLI's client: each call a gRPC request with the token, the version and a deadline.
#include "coordinator/client.hpp"

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <fstream>

#include "proto/tuning.grpc.pb.h"
#include "wire.hpp"

namespace lt::coord {
namespace pb = lanetune::v1;
using wire::check;

std::string default_coordinator() {
  const char* e = std::getenv("LT_COORDINATOR");
  return e && *e ? e : "127.0.0.1:7117";
}

std::string default_token() {
  const char* e = std::getenv("LT_TOKEN");
  return e ? e : "";
}

// The channel, the stub and what every call carries.
struct Client::Impl {
  std::string address, token;
  double timeout_s;
  std::unique_ptr<pb::Coordinator::Stub> stub;

  std::unique_ptr<grpc::ClientContext> context(double timeout) const { return wire::context(token, timeout); }
};

std::string default_tls_ca() {
  const char* e = std::getenv("LT_TLS_CA");
  return e ? e : "";
}

Client::Client(const std::string& address, const std::string& token, double timeout_s, const std::string& tls_ca)
    : impl_(std::make_unique<Impl>()) {
  impl_->address = address;
  impl_->token = token;
  impl_->timeout_s = timeout_s;
  impl_->stub = pb::Coordinator::NewStub(lt::wire::channel(address, tls_ca));
}

Client::~Client() = default;

std::string Client::upload(const std::filesystem::path& path, const std::function<void(uint64_t, uint64_t)>& progress) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw lt::Error("cannot read " + path.string());
  const uint64_t total = std::filesystem::file_size(path);
  auto ctx = impl_->context(0);
  pb::CheckpointRef ref;
  auto w = impl_->stub->UploadCheckpoint(ctx.get(), &ref);
  wire::send_chunks(
      in, total, [](pb::CheckpointChunk& c) { wire::versioned(c); },
      [&](const pb::CheckpointChunk& c) { return w->Write(c); },
      [&](uint64_t sent) {
        if (progress) progress(sent, total);
      });
  w->WritesDone();  // a stream the server closed early says why in Finish
  check(w->Finish(), impl_->address);
  return ref.digest();
}

JobStatus Client::submit(const JobSpec& s) {
  pb::SubmitRequest r;
  wire::versioned(r);
  if (!s.digest.empty()) r.set_digest(s.digest);
  if (!s.path.empty()) r.set_path(s.path);
  for (auto& g : s.gpus) r.add_gpus(g);
  r.set_strategy(s.strategy);
  r.set_budget(s.budget);
  r.set_time_budget_s(s.time_budget_s);
  r.set_context(s.context);
  r.set_seed(s.seed);
  r.set_objective(s.objective);
  if (s.workload) {
    r.mutable_workload()->set_prompt(s.workload->prompt);
    r.mutable_workload()->set_gen(s.workload->gen);
  }
  pb::JobStatus out;
  check(impl_->stub->Submit(impl_->context(impl_->timeout_s * 4).get(), r, &out), impl_->address);
  return wire::from_wire(out);
}

void Client::watch(int64_t job, const std::function<bool(const JobStatus&)>& each) {
  pb::JobRef r;
  wire::versioned(r).set_job(job);
  auto ctx = impl_->context(0);
  auto reader = impl_->stub->Watch(ctx.get(), r);
  pb::JobStatus m;
  while (reader->Read(&m))
    if (!each(wire::from_wire(m))) {
      ctx->TryCancel();
      break;
    }
  auto st = reader->Finish();
  if (st.error_code() != grpc::StatusCode::CANCELLED) check(st, impl_->address);
}

std::vector<JobStatus> Client::list() {
  pb::ListRequest r;
  wire::versioned(r);
  pb::JobList out;
  check(impl_->stub->List(impl_->context(impl_->timeout_s).get(), r, &out), impl_->address);
  std::vector<JobStatus> v;
  for (auto& j : out.jobs()) v.push_back(wire::from_wire(j));
  return v;
}

JobStatus Client::status(int64_t job) {
  pb::JobRef r;
  wire::versioned(r).set_job(job);
  pb::JobStatus out;
  check(impl_->stub->Status(impl_->context(impl_->timeout_s).get(), r, &out), impl_->address);
  return wire::from_wire(out);
}

std::vector<db::Run> Client::results(int64_t job, const std::string& gpu, uint32_t top) {
  pb::ResultsRequest r;
  wire::versioned(r).set_job(job);
  r.set_gpu(gpu);
  r.set_top(top);
  std::vector<db::Run> v;
  do {  // page after page
    pb::ResultList out;
    check(impl_->stub->Results(impl_->context(impl_->timeout_s).get(), r, &out), impl_->address);
    for (auto& x : out.results()) v.push_back(wire::from_wire(x));
    r.set_offset(out.next_offset());
  } while (r.offset() != 0);
  return v;
}

std::vector<db::Run> Client::best(int64_t job, const std::string& gpu) {
  pb::ResultsRequest r;
  wire::versioned(r).set_job(job);
  r.set_gpu(gpu);
  pb::ResultList out;
  check(impl_->stub->Best(impl_->context(impl_->timeout_s).get(), r, &out), impl_->address);
  std::vector<db::Run> v;
  for (auto& x : out.results()) v.push_back(wire::from_wire(x));
  return v;
}

JobStatus Client::cancel(int64_t job) {
  pb::JobRef r;
  wire::versioned(r).set_job(job);
  pb::JobStatus out;
  check(impl_->stub->Cancel(impl_->context(impl_->timeout_s).get(), r, &out), impl_->address);
  return wire::from_wire(out);
}

std::vector<WorkerStatus> Client::workers(const std::string& gpu, bool include_gone) {
  pb::WorkersRequest r;
  wire::versioned(r).set_gpu(gpu);
  r.set_include_gone(include_gone);
  pb::WorkerList out;
  check(impl_->stub->Workers(impl_->context(impl_->timeout_s).get(), r, &out), impl_->address);
  std::vector<WorkerStatus> v;
  for (auto& w : out.workers()) v.push_back(wire::from_wire(w));
  return v;
}

std::vector<db::HistoryRow> Client::history(const std::string& checkpoint, const std::string& gpu) {
  pb::HistoryRequest r;
  wire::versioned(r).set_checkpoint(checkpoint);
  r.set_gpu(gpu);
  pb::HistoryList out;
  check(impl_->stub->History(impl_->context(impl_->timeout_s).get(), r, &out), impl_->address);
  std::vector<db::HistoryRow> v;
  for (auto& h : out.entries()) v.push_back(wire::from_wire(h));
  return v;
}

Comparison Client::compare(int64_t job, int64_t against, const std::string& gpu) {
  pb::CompareRequest r;
  wire::versioned(r).set_job(job);
  r.set_against(against);
  r.set_gpu(gpu);
  pb::Comparison out;
  check(impl_->stub->Compare(impl_->context(impl_->timeout_s).get(), r, &out), impl_->address);
  return wire::from_wire(out);
}

}  // namespace lt::coord
