// The coordinator's RPC requests fuzzed: the first byte picks an RPC, the rest is its request message as bytes on the
// wire. A request that decodes is answered in process as the server answers it: the unary RPCs by the service's own
// handlers (coordinator_service: the version, the validation, the core), the streaming ones (UploadCheckpoint, Watch,
// FetchCheckpoint) by the checks their handlers make before they stream. The core runs on a SQLite file with a
// stand-in compiler, and holds a job, a worker and two leases from the start, so that reports and heartbeats reach
// the lease checks. Every request must be answered with a status a client can act on; a crash, a sanitizer report or
// INTERNAL / UNKNOWN (an error the validation let through) is a bug.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "coordinator/core.hpp"
#include "coordinator/service.hpp"
#include "service/fake_compiler.hpp"

namespace {
namespace pb = lanetune::v1;
using lt::coord::Coordinator;

// The RPCs, by the first byte of an input (modulo their count).
enum class Rpc {
  UploadCheckpoint,
  Submit,
  Watch,
  List,
  Status,
  Results,
  Best,
  Cancel,
  Register,
  Lease,
  Heartbeat,
  Report,
  FetchCheckpoint,
  Workers,
  History,
  Compare,
  Count
};

// The coordinator every input is answered by, in a folder of its own removed at exit.
struct Served {
  std::filesystem::path dir;
  std::unique_ptr<Coordinator> core;
  std::atomic<bool> stopping{true};  // (no Watch stream is opened)
  std::unique_ptr<pb::Coordinator::Service> service;
  std::string key;  // worker 1's

  Served() {
    char tmpl[] = "/tmp/lt-rpc-fuzz-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    dir = tmpl;
    // The stand-in compiler's checkpoint: its digest is the corpus's (make_rpc_corpus.py).
    std::ofstream(dir / "model.gguf") << "GGUF and some bytes";
    lt::coord::Options o;
    o.data_dir = dir / "data";
    o.path_roots = {dir};
    o.replenish_inline = true;
    o.max_running_jobs = 16;
    core = std::make_unique<Coordinator>(dir / "lt.db", o, std::make_unique<lt::test::FakeCompiler>(16));
    lt::coord::ServerOptions so;
    so.listen = "127.0.0.1:0";
    service = lt::coord::coordinator_service(*core, so, stopping);
    // Worker 1 (h100) holds leases 1 and 2 of job 1's plans; its key is what an input naming it without one carries
    // (make_rpc_corpus.py's requests have none), so the corpus reaches past the identity check.
    lt::coord::JobSpec s;
    s.path = (dir / "model.gguf").string();
    s.gpus = {"h100"};
    s.strategy = "grid";
    core->submit(s);
    lt::db::Worker w;
    w.name = "fuzz";
    w.gpu = "h100";
    core->lease(core->register_worker(w, &key), 2);
  }
  ~Served() {
    service.reset();
    core.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Served& served() {
  static Served s;
  return s;
}

// Answers `bytes` as a request of type Req with `handler`; false when the bytes are no such request.
template <class Req, class Reply, class Handler>
bool answer(const uint8_t* data, size_t size, Handler handler) {
  Req req;
  if (!req.ParseFromArray(data, int(size))) return false;
  if constexpr (requires { req.key(); })  // (a worker's call)
    if (req.worker() == 1 && req.key().empty()) req.set_key(served().key);
  grpc::ServerContext ctx;
  Reply reply;
  const grpc::Status st = (served().service.get()->*handler)(&ctx, &req, &reply);
  static const bool verbose = std::getenv("LT_FUZZ_VERBOSE") != nullptr;  // what each input got, to read a corpus by
  if (verbose)
    std::fprintf(stderr, "rpc_fuzz: %s: %d %s\n", Req::descriptor()->name().c_str(), int(st.error_code()),
                 st.error_message().c_str());
  if (st.error_code() == grpc::StatusCode::INTERNAL || st.error_code() == grpc::StatusCode::UNKNOWN) {
    std::fprintf(stderr, "rpc_fuzz: %s answered %d: %s\n", Req::descriptor()->name().c_str(), int(st.error_code()),
                 st.error_message().c_str());
    __builtin_trap();
  }
  return true;
}

// Runs what a streaming RPC's handler checks before it streams; lt::Error is a refusal the handler turns into a status.
template <class Req, class Check>
void check_stream(const uint8_t* data, size_t size, Check check) {
  Req req;
  if (!req.ParseFromArray(data, int(size))) return;
  try {
    if (req.version().major() != 1) return;  // FAILED_PRECONDITION
    check(req);
  } catch (const lt::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto& s = served();
  const uint8_t* msg = data + 1;
  const size_t n = size - 1;
  using S = pb::Coordinator::Service;
  switch (Rpc(data[0] % uint8_t(Rpc::Count))) {
    case Rpc::UploadCheckpoint:
      check_stream<pb::CheckpointChunk>(msg, n, [&](const pb::CheckpointChunk& c) {
        lt::coord::Upload u(s.core->upload_dir(), 1 << 20);
        u.append(c.offset(), c.data());
      });
      break;
    case Rpc::Submit:
      answer<pb::SubmitRequest, pb::JobStatus>(msg, n, &S::Submit);
      break;
    case Rpc::Watch:
      check_stream<pb::JobRef>(msg, n, [&](const pb::JobRef& r) { s.core->status(r.job()); });
      break;
    case Rpc::List:
      answer<pb::ListRequest, pb::JobList>(msg, n, &S::List);
      break;
    case Rpc::Status:
      answer<pb::JobRef, pb::JobStatus>(msg, n, &S::Status);
      break;
    case Rpc::Results:
      answer<pb::ResultsRequest, pb::ResultList>(msg, n, &S::Results);
      break;
    case Rpc::Best:
      answer<pb::ResultsRequest, pb::ResultList>(msg, n, &S::Best);
      break;
    case Rpc::Cancel:
      answer<pb::JobRef, pb::JobStatus>(msg, n, &S::Cancel);
      break;
    case Rpc::Register:
      answer<pb::RegisterRequest, pb::RegisterReply>(msg, n, &S::Register);
      break;
    case Rpc::Lease:
      answer<pb::LeaseRequest, pb::LeaseReply>(msg, n, &S::Lease);
      break;
    case Rpc::Heartbeat:
      answer<pb::HeartbeatRequest, pb::HeartbeatReply>(msg, n, &S::Heartbeat);
      break;
    case Rpc::Report:
      answer<pb::ReportRequest, pb::ReportReply>(msg, n, &S::Report);
      break;
    case Rpc::FetchCheckpoint:
      check_stream<pb::FetchRequest>(msg, n, [&](const pb::FetchRequest& r) { s.core->checkpoint_path(r.digest()); });
      break;
    case Rpc::Workers:
      answer<pb::WorkersRequest, pb::WorkerList>(msg, n, &S::Workers);
      break;
    case Rpc::History:
      answer<pb::HistoryRequest, pb::HistoryList>(msg, n, &S::History);
      break;
    case Rpc::Compare:
      answer<pb::CompareRequest, pb::Comparison>(msg, n, &S::Compare);
      break;
    case Rpc::Count:
      break;
  }
  return 0;
}
