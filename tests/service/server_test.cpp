// The gRPC server in process: status codes for bad tokens, versions and requests, and a plan's round trip.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <thread>

#include "coordinator/client.hpp"
#include "coordinator/server.hpp"
#include "fake_compiler.hpp"
#include "proto/tuning.grpc.pb.h"
#include "support/test_support.hpp"

namespace lt::coord {
namespace {
namespace pb = lanetune::v1;

// A coordinator core behind a server on a free port, and a stub to call it.
struct Served {
  test::TempDir dir;
  std::unique_ptr<Coordinator> core;
  std::unique_ptr<Server> server;
  std::unique_ptr<pb::Coordinator::Stub> stub;
  std::string token = "t0k3n";

  explicit Served(int points = 3, size_t page_bytes = 8 << 20, int max_watches = 64, int max_watches_per_client = 16) {
    Options o;
    o.data_dir = dir / "data";
    o.path_roots = {dir.path()};
    core = std::make_unique<Coordinator>(dir / "lt.db", o, std::make_unique<test::FakeCompiler>(points));
    ServerOptions so{"127.0.0.1:0", token, "", "", 0.2};
    so.results_page_bytes = page_bytes;
    so.max_watches = max_watches;
    so.max_watches_per_client = max_watches_per_client;
    server = std::make_unique<Server>(*core, so);
    stub = pb::Coordinator::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server->port()), grpc::InsecureChannelCredentials()));
  }
  std::unique_ptr<grpc::ClientContext> ctx(const std::string& t) {
    auto c = std::make_unique<grpc::ClientContext>();
    if (!t.empty()) c->AddMetadata("authorization", "Bearer " + t);
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return c;
  }
  template <class M>
  static M v1(M m) {
    m.mutable_version()->set_major(1);
    return m;
  }
};

TEST(Server, ChecksTheTokenOnEveryCall) {
  Served s;
  pb::JobList out;
  EXPECT_EQ(s.stub->List(s.ctx("").get(), Served::v1(pb::ListRequest()), &out).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.stub->List(s.ctx("wrong").get(), Served::v1(pb::ListRequest()), &out).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(s.stub->List(s.ctx(s.token).get(), Served::v1(pb::ListRequest()), &out).ok());
}

// Workers checks the token as List does, speaks only its version, and refuses a GPU kind it does not know (names are
// canonical on the wire: the CLI makes `H200` `h200`).
TEST(Server, ListsWorkersToTokenHoldersOnly) {
  Served s;
  pb::WorkerList out;
  pb::WorkersRequest all = Served::v1(pb::WorkersRequest());
  EXPECT_EQ(s.stub->Workers(s.ctx("").get(), all, &out).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.stub->Workers(s.ctx("wrong").get(), all, &out).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.stub->Workers(s.ctx(s.token).get(), pb::WorkersRequest(), &out).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);  // no version
  pb::WorkersRequest shouted = all;
  shouted.set_gpu("H100");
  EXPECT_EQ(s.stub->Workers(s.ctx(s.token).get(), shouted, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  db::Worker w;
  w.name = "w1";
  w.gpu = "h100";
  const int64_t id = s.core->register_worker(w);
  ASSERT_TRUE(s.stub->Workers(s.ctx(s.token).get(), all, &out).ok());
  ASSERT_EQ(out.workers_size(), 1);
  EXPECT_EQ(out.workers(0).worker(), id);
  EXPECT_EQ(out.workers(0).gpu(), "h100");
  EXPECT_EQ(out.workers(0).state(), "idle");
  EXPECT_EQ(out.workers(0).leases(), 0u);
}

// Secure defaults: beyond loopback only with a token, a port in 0..65535, and a port in use is an error (never shared
// with another server, which would answer some calls from another database).
TEST(Server, ListensOnlyWhereItIsSafeAndOnlyOnAFreePort) {
  EXPECT_THROW(check_listen("0.0.0.0:0", ""), lt::Error);
  EXPECT_THROW(check_listen("10.1.2.3:7117", ""), lt::Error);
  EXPECT_NO_THROW(check_listen("0.0.0.0:0", "t0k3n"));
  EXPECT_NO_THROW(check_listen("127.0.0.1:0", ""));
  EXPECT_NO_THROW(check_listen("localhost:7117", ""));
  EXPECT_NO_THROW(check_listen("[::1]:7117", ""));
  for (const char* bad : {"127.0.0.1:99999", "127.0.0.1:", "127.0.0.1:http", "7117", ":7117", "127.0.0.1:-1"})
    EXPECT_THROW(check_listen(bad, "t"), lt::Error) << bad;
  Served s;
  Options o;
  o.data_dir = s.dir / "data2";
  Coordinator other(s.dir / "other.db", o, std::make_unique<test::FakeCompiler>(3));
  EXPECT_THROW(Server(other, ServerOptions{"127.0.0.1:" + std::to_string(s.server->port()), "x", "", "", 0.2}),
               lt::Error);
  EXPECT_THROW(Server(other, ServerOptions{"0.0.0.0:0", "", "", "", 0.2}), lt::Error);
}

TEST(Server, RefusesAnotherProtocolVersion) {
  Served s;
  pb::JobList out;
  pb::ListRequest r;
  EXPECT_EQ(s.stub->List(s.ctx(s.token).get(), r, &out).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  r.mutable_version()->set_major(2);
  EXPECT_EQ(s.stub->List(s.ctx(s.token).get(), r, &out).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST(Server, AnswersBadRequestsWithInvalidArgumentOrNotFound) {
  Served s;
  pb::JobStatus st;
  pb::SubmitRequest sub;
  sub.add_gpus("h100");
  EXPECT_EQ(s.stub->Submit(s.ctx(s.token).get(), Served::v1(sub), &st).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);  // no checkpoint
  pb::JobRef job;
  job.set_job(5);
  EXPECT_EQ(s.stub->Status(s.ctx(s.token).get(), Served::v1(job), &st).error_code(), grpc::StatusCode::NOT_FOUND);
  pb::RegisterRequest reg;
  reg.set_name("w");
  reg.set_gpu("h100");
  reg.set_properties("{not json");
  pb::RegisterReply rr;
  EXPECT_EQ(s.stub->Register(s.ctx(s.token).get(), Served::v1(reg), &rr).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  pb::LeaseRequest lease;
  lease.set_worker(1);
  lease.set_max_plans(0);
  pb::LeaseReply lr;
  EXPECT_EQ(s.stub->Lease(s.ctx(s.token).get(), Served::v1(lease), &lr).error_code(),
            grpc::StatusCode::NOT_FOUND);  // (no worker 1: who calls is checked first)
  pb::FetchRequest fetch;
  fetch.set_digest("../../etc/passwd");
  auto c = s.ctx(s.token);
  auto reader = s.stub->FetchCheckpoint(c.get(), Served::v1(fetch));
  pb::CheckpointChunk chunk;
  while (reader->Read(&chunk)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(s.core->list().empty());
}

// Uploads a few bytes as a checkpoint (the digest into `ref`) and submits a job on l4 for it (its status into `st`).
void upload_and_submit(Served& s, pb::CheckpointRef& ref, pb::JobStatus& st) {
  {
    auto c = s.ctx(s.token);
    auto w = s.stub->UploadCheckpoint(c.get(), &ref);
    pb::CheckpointChunk chunk;
    chunk.set_data("GGUF bytes");
    ASSERT_TRUE(w->Write(Served::v1(chunk)));
    w->WritesDone();
    ASSERT_TRUE(w->Finish().ok());
  }
  pb::SubmitRequest sub;
  sub.set_digest(ref.digest());
  sub.add_gpus("l4");
  ASSERT_TRUE(s.stub->Submit(s.ctx(s.token).get(), Served::v1(sub), &st).ok());
}

TEST(Server, CarriesAPlanFromUploadToReport) {
  Served s;
  pb::CheckpointRef ref;
  pb::JobStatus st;
  ASSERT_NO_FATAL_FAILURE(upload_and_submit(s, ref, st));
  EXPECT_EQ(ref.digest().size(), 32u);
  pb::RegisterRequest reg;
  reg.set_name("w");
  reg.set_gpu("l4");
  pb::RegisterReply rr;
  ASSERT_TRUE(s.stub->Register(s.ctx(s.token).get(), Served::v1(reg), &rr).ok());
  EXPECT_EQ(rr.key().size(), 32u);  // 128 bits in hex
  pb::LeaseRequest lease;
  lease.set_worker(rr.worker());
  lease.set_max_plans(0);
  lease.set_key(rr.key());
  pb::LeaseReply lr;
  EXPECT_EQ(s.stub->Lease(s.ctx(s.token).get(), Served::v1(lease), &lr).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  lease.set_max_plans(1);
  ASSERT_TRUE(s.stub->Lease(s.ctx(s.token).get(), Served::v1(lease), &lr).ok());
  ASSERT_EQ(lr.plans_size(), 1);
  EXPECT_EQ(lr.plans(0).prompts_size(), 4);
  EXPECT_EQ(lr.plans(0).checkpoint(), ref.digest());
  // The default job: the model strategy's first plans are screens on the default workload, profiled.
  EXPECT_EQ(lr.plans(0).workload().prompt(), 512u);
  EXPECT_EQ(lr.plans(0).workload().gen(), 128u);
  EXPECT_FALSE(lr.plans(0).verify());
  EXPECT_TRUE(lr.plans(0).profile());
  EXPECT_EQ(lr.plans(0).repetitions(), 1u);
  EXPECT_FALSE(lr.plans(0).checkpoint_path().empty());
  EXPECT_EQ(st.objective(), "workload");
  EXPECT_EQ(st.gpus(0).planned(), 3u);

  std::string fetched;
  {
    pb::FetchRequest fetch;
    fetch.set_digest(ref.digest());
    auto c = s.ctx(s.token);
    auto reader = s.stub->FetchCheckpoint(c.get(), Served::v1(fetch));
    pb::CheckpointChunk chunk;
    while (reader->Read(&chunk)) fetched += chunk.data();
    EXPECT_TRUE(reader->Finish().ok());
  }
  EXPECT_EQ(fetched, "GGUF bytes");

  pb::ReportRequest rep;
  rep.set_worker(rr.worker());
  rep.set_plan(lr.plans(0).plan());
  rep.set_lease(lr.plans(0).lease());
  rep.set_key(rr.key());
  rep.mutable_result()->set_valid(true);
  rep.mutable_result()->set_median_ms(-1);
  pb::ReportReply out;
  EXPECT_EQ(s.stub->Report(s.ctx(s.token).get(), Served::v1(rep), &out).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  rep.mutable_result()->set_median_ms(1.5);
  ASSERT_TRUE(s.stub->Report(s.ctx(s.token).get(), Served::v1(rep), &out).ok());
  EXPECT_TRUE(out.recorded());
  ASSERT_TRUE(s.stub->Report(s.ctx(s.token).get(), Served::v1(rep), &out).ok());
  EXPECT_FALSE(out.recorded());
}

// A worker's identity is bound to its registration: every Lease, Heartbeat and Report names a worker and carries the
// key its registration returned. Another token holder that names the worker (with its own key, another's, or none)
// is refused with PERMISSION_DENIED and changes nothing: no lease taken, no result recorded.
TEST(Server, OnlyTheRegisteredWorkerActsAsIt) {
  Served s;
  pb::CheckpointRef ref;
  pb::JobStatus st;
  ASSERT_NO_FATAL_FAILURE(upload_and_submit(s, ref, st));
  auto register_as = [&](const std::string& name) {
    pb::RegisterRequest reg;
    reg.set_name(name);
    reg.set_gpu("l4");
    pb::RegisterReply rr;
    EXPECT_TRUE(s.stub->Register(s.ctx(s.token).get(), Served::v1(reg), &rr).ok());
    return rr;
  };
  const pb::RegisterReply a = register_as("a"), b = register_as("b");
  EXPECT_NE(a.key(), b.key());
  auto lease = [&](int64_t worker, const std::string& key, pb::LeaseReply* out) {
    pb::LeaseRequest r;
    r.set_worker(worker);
    r.set_max_plans(1);
    r.set_key(key);
    return s.stub->Lease(s.ctx(s.token).get(), Served::v1(r), out).error_code();
  };
  pb::LeaseReply none;
  for (const std::string& key : {b.key(), std::string(), std::string(32, '0'), a.key().substr(0, 31)})
    EXPECT_EQ(lease(a.worker(), key, &none), grpc::StatusCode::PERMISSION_DENIED) << key;
  EXPECT_EQ(none.plans_size(), 0);
  pb::LeaseReply la;
  ASSERT_EQ(lease(a.worker(), a.key(), &la), grpc::StatusCode::OK);
  ASSERT_EQ(la.plans_size(), 1);

  pb::HeartbeatRequest hb;
  hb.set_worker(a.worker());
  hb.add_leases(la.plans(0).lease());
  hb.set_key(b.key());
  pb::HeartbeatReply hr;
  EXPECT_EQ(s.stub->Heartbeat(s.ctx(s.token).get(), Served::v1(hb), &hr).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // b forges a's result (a's worker id, b's key): refused, nothing recorded; a's own report is recorded.
  pb::ReportRequest rep;
  rep.set_worker(a.worker());
  rep.set_plan(la.plans(0).plan());
  rep.set_lease(la.plans(0).lease());
  rep.set_key(b.key());
  rep.mutable_result()->set_valid(true);
  rep.mutable_result()->set_median_ms(0.0001);
  pb::ReportReply out;
  EXPECT_EQ(s.stub->Report(s.ctx(s.token).get(), Served::v1(rep), &out).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(s.core->results(st.job(), "l4", 0).empty());
  rep.set_key(a.key());
  rep.mutable_result()->set_median_ms(2.0);
  ASSERT_TRUE(s.stub->Report(s.ctx(s.token).get(), Served::v1(rep), &out).ok());
  ASSERT_EQ(s.core->results(st.job(), "l4", 0).size(), 1u);
  EXPECT_EQ(s.core->results(st.job(), "l4", 0)[0].median_ms, 2.0);
  // A worker registered before keys (a database from before them) is told to register again, as an unknown one is.
  db::Worker old;
  old.name = "old";
  old.gpu = "l4";
  const int64_t old_id = s.core->register_worker(old);
  grpc::Status again;
  {
    pb::LeaseRequest r;
    r.set_worker(old_id);
    r.set_max_plans(1);
    pb::LeaseReply out2;
    again = s.stub->Lease(s.ctx(s.token).get(), Served::v1(r), &out2);
  }
  EXPECT_EQ(again.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(again.error_message().rfind("no worker", 0), 0u) << again.error_message();
}

// Results come a page at a time (a reply under its size limit); the client reads every page. Watch streams are
// bounded: past the limit, RESOURCE_EXHAUSTED.
// Opens two Watch streams of `ref` (each answering) and a third; returns how the third ended, the two closed after.
grpc::Status third_watch_refused(Served& s, const pb::JobRef& ref) {
  std::vector<std::unique_ptr<grpc::ClientContext>> ctxs;
  std::vector<std::unique_ptr<grpc::ClientReader<pb::JobStatus>>> streams;
  for (int i = 0; i < 2; ++i) {
    ctxs.push_back(s.ctx(s.token));
    streams.push_back(s.stub->Watch(ctxs.back().get(), Served::v1(ref)));
    pb::JobStatus st;
    EXPECT_TRUE(streams.back()->Read(&st));  // open and answering
  }
  auto third_ctx = s.ctx(s.token);
  auto third = s.stub->Watch(third_ctx.get(), Served::v1(ref));
  pb::JobStatus st;
  EXPECT_FALSE(third->Read(&st));
  const grpc::Status status = third->Finish();
  for (auto& c : ctxs) c->TryCancel();
  for (auto& r : streams) r->Finish();
  return status;
}

TEST(Server, PagesResultsAndBoundsWatchStreams) {
  Served s(40, 2000, 2);
  std::ofstream(s.dir / "m.gguf") << "GGUF and some bytes";
  JobSpec spec;
  spec.path = (s.dir / "m.gguf").string();
  spec.gpus = {"h100"};
  spec.strategy = "grid";
  const int64_t job = s.core->submit(spec).job.id;
  db::Worker w;
  w.name = "w";
  w.gpu = "h100";
  const int64_t wid = s.core->register_worker(w);
  for (int n = 0, waits = 0; n < 40;) {
    auto ls = s.core->lease(wid, 8);
    if (ls.empty()) {  // (the server's replenisher makes the grid's next plans)
      ASSERT_LT(++waits, 500);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    for (auto& l : ls) {
      db::Run r;
      r.valid = true;
      r.verified = true;
      r.median_ms = 1 + n++;
      r.cost = nlohmann::json{{"note", std::string(100, 'x')}}.dump();
      s.core->report(wid, l.plan.id, l.plan.lease, r);
    }
  }
  pb::ResultsRequest rq;
  rq.set_job(job);
  pb::ResultList first;
  ASSERT_TRUE(s.stub->Results(s.ctx(s.token).get(), Served::v1(rq), &first).ok());
  EXPECT_GT(first.results_size(), 0);
  EXPECT_LT(first.results_size(), 40);
  EXPECT_EQ(first.next_offset(), uint32_t(first.results_size()));
  rq.set_offset(1000);
  EXPECT_EQ(s.stub->Results(s.ctx(s.token).get(), Served::v1(rq), &first).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  Client client("127.0.0.1:" + std::to_string(s.server->port()), s.token);
  auto all = client.results(job, "", 0);
  ASSERT_EQ(all.size(), 40u);
  std::set<double> ms;
  for (auto& r : all) ms.insert(r.median_ms);
  EXPECT_EQ(ms.size(), 40u);  // every run once

  // Two Watch streams of a running job are open; a third is refused.
  JobSpec running = spec;
  const int64_t live = s.core->submit(running).job.id;
  pb::JobRef ref;
  ref.set_job(live);
  EXPECT_EQ(third_watch_refused(s, ref).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

// One client holds at most its share of the Watch streams: a third from the same host is refused while the server
// as a whole has room.
TEST(Server, BoundsWatchStreamsPerClient) {
  Served s(3, 8 << 20, 64, 2);
  std::ofstream(s.dir / "m.gguf") << "GGUF and some bytes";
  JobSpec spec;
  spec.path = (s.dir / "m.gguf").string();
  spec.gpus = {"h100"};
  spec.strategy = "grid";
  pb::JobRef ref;
  ref.set_job(s.core->submit(spec).job.id);
  const grpc::Status refused = third_watch_refused(s, ref);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("open from ipv4:127.0.0.1"), std::string::npos) << refused.error_message();
}

TEST(Server, ServesTlsToClientsThatTrustItsCertificate) {
  test::TempDir dir;
  auto key = dir / "key.pem", cert = dir / "cert.pem";
  auto gen = test::run(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -addext "
      "subjectAltName=IP:127.0.0.1,DNS:localhost -keyout " +
      key.string() + " -out " + cert.string());
  if (gen.status != 0) GTEST_SKIP() << "openssl cannot make a certificate here: " << gen.out;
  Options o;
  o.data_dir = dir / "data";
  Coordinator core(dir / "lt.db", o, std::make_unique<test::FakeCompiler>(3));
  ServerOptions so;
  so.listen = "127.0.0.1:0";
  so.tls_cert = cert.string();
  so.tls_key = key.string();
  Server server(core, so);
  std::string address = "127.0.0.1:" + std::to_string(server.port());
  EXPECT_TRUE(Client(address, "", 10, cert.string()).list().empty());
  EXPECT_THROW(Client(address, "", 5, "").list(), CallError);
}

}  // namespace
}  // namespace lt::coord
