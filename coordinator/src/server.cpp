// The Coordinator service over gRPC: each RPC checks the token and the version, validates, and calls the core.
#include "coordinator/server.hpp"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "coordinator/log.hpp"
#include "coordinator/service.hpp"
#include "proto/health.pb.h"
#include "proto/release.grpc.pb.h"
#include "proto/tuning.grpc.pb.h"
#include "release_server.hpp"
#include "serve.hpp"
#include "wire.hpp"

namespace lt::coord {
namespace {
namespace pb = lanetune::v1;
using grpc::ServerContext;
using grpc::StatusCode;

// The service: a translation layer, no decisions of its own.
class Service final : public pb::Coordinator::Service {
 public:
  Service(Coordinator& core, const ServerOptions& o, std::atomic<bool>& stopping)
      : core_(core),
        token_(o.token),
        page_bytes_(o.results_page_bytes),
        max_watches_(o.max_watches),
        max_watches_per_client_(o.max_watches_per_client),
        stopping_(stopping) {}

  grpc::Status UploadCheckpoint(ServerContext* ctx, grpc::ServerReader<pb::CheckpointChunk>* in,
                                pb::CheckpointRef* out) override {
    return call(ctx, static_cast<const pb::CheckpointChunk*>(nullptr), [&] {
      Upload u(core_.upload_dir(), core_.options().max_upload_bytes);
      pb::CheckpointChunk c;
      while (in->Read(&c)) {
        serve::check_version(c.version().major());
        u.append(c.offset(), c.data());
      }
      std::string d = core_.add_checkpoint(u);
      wire::versioned(*out).set_digest(d);
      out->set_size(u.size());
      log(1, "checkpoint_stored", {{"digest", d}, {"bytes", std::to_string(u.size())}});
    });
  }

  grpc::Status Submit(ServerContext* ctx, const pb::SubmitRequest* r, pb::JobStatus* out) override {
    return call(ctx, r, [&] {
      JobSpec s;
      s.digest = r->digest();
      s.path = r->path();
      s.gpus.assign(r->gpus().begin(), r->gpus().end());
      s.strategy = r->strategy().empty() ? "model" : r->strategy();
      s.budget = r->budget();
      s.time_budget_s = r->time_budget_s();
      s.context = r->context();
      s.seed = r->seed();
      s.objective = r->objective().empty() ? "workload" : r->objective();
      if (r->has_workload()) s.workload = Workload{r->workload().prompt(), r->workload().gen()};
      auto st = core_.submit(s);
      wire::to_wire(st, out);
      log(1, "job_submitted", {{"job", std::to_string(st.job.id)}, {"strategy", s.strategy}});
    });
  }

  grpc::Status Watch(ServerContext* ctx, const pb::JobRef* r, grpc::ServerWriter<pb::JobStatus>* out) override {
    return call(ctx, r, [&] {
      // Each stream holds a thread: a bounded number at once, and fewer from one client.
      struct Leave {
        Service& s;
        std::string client;
        ~Leave() {
          std::lock_guard lock(s.watch_m_);
          --s.watching_;
          if (--s.watching_by_[client] == 0) s.watching_by_.erase(client);
        }
      };
      const std::string client = client_of(*ctx);
      {
        std::lock_guard lock(watch_m_);
        if (watching_ >= max_watches_)
          throw ResourceExhausted(std::to_string(max_watches_) + " Watch streams are open: poll Status instead");
        auto mine = watching_by_.find(client);
        if (mine != watching_by_.end() && mine->second >= max_watches_per_client_)
          throw ResourceExhausted(std::to_string(max_watches_per_client_) + " Watch streams are open from " + client +
                                  ": poll Status instead");
        ++watching_;
        ++watching_by_[client];
      }
      const Leave leave{*this, client};  // counted out when the stream ends
      std::string last;
      while (!ctx->IsCancelled() && !stopping_) {
        pb::JobStatus m;
        auto st = core_.status(r->job());
        wire::to_wire(st, &m);
        std::string now = m.SerializeAsString();
        if (now != last && !out->Write(m)) return;
        last = now;
        if (st.job.state != "running") return;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
    });
  }

  grpc::Status List(ServerContext* ctx, const pb::ListRequest* r, pb::JobList* out) override {
    return call(ctx, r, [&] {
      wire::versioned(*out);
      for (auto& s : core_.list()) wire::to_wire(s, out->add_jobs());
    });
  }

  grpc::Status Status(ServerContext* ctx, const pb::JobRef* r, pb::JobStatus* out) override {
    return call(ctx, r, [&] { wire::to_wire(core_.status(r->job()), out); });
  }

  grpc::Status Results(ServerContext* ctx, const pb::ResultsRequest* r, pb::ResultList* out) override {
    return call(ctx, r, [&] {
      wire::versioned(*out);
      // A page at a time: runs from `offset` while the reply stays under its size (at least one run a page).
      const auto runs = core_.results(r->job(), r->gpu(), r->top());
      if (r->offset() > runs.size())
        throw InvalidArgument("offset " + std::to_string(r->offset()) + " is past the " + std::to_string(runs.size()) +
                              " runs");
      size_t bytes = 0, i = r->offset();
      for (; i < runs.size(); ++i) {
        pb::Result one;
        wire::to_wire(runs[i], &one);
        bytes += one.ByteSizeLong();
        if (bytes > page_bytes_ && i > r->offset()) break;
        *out->add_results() = std::move(one);
      }
      out->set_next_offset(i < runs.size() ? uint32_t(i) : 0);
    });
  }

  grpc::Status Best(ServerContext* ctx, const pb::ResultsRequest* r, pb::ResultList* out) override {
    return call(ctx, r, [&] {
      wire::versioned(*out);
      for (auto& x : core_.best(r->job(), r->gpu())) wire::to_wire(x, out->add_results());
    });
  }

  grpc::Status Cancel(ServerContext* ctx, const pb::JobRef* r, pb::JobStatus* out) override {
    return call(ctx, r, [&] {
      wire::to_wire(core_.cancel(r->job()), out);
      log(1, "job_cancelled", {{"job", std::to_string(r->job())}});
    });
  }

  grpc::Status Workers(ServerContext* ctx, const pb::WorkersRequest* r, pb::WorkerList* out) override {
    return call(ctx, r, [&] {
      wire::versioned(*out);
      for (auto& w : core_.workers(r->gpu(), r->include_gone())) wire::to_wire(w, out->add_workers());
    });
  }

  grpc::Status History(ServerContext* ctx, const pb::HistoryRequest* r, pb::HistoryList* out) override {
    return call(ctx, r, [&] {
      wire::versioned(*out);
      for (auto& h : JobHistory(core_).list({r->checkpoint(), r->gpu(), 0})) wire::to_wire(h, out->add_entries());
    });
  }

  grpc::Status Compare(ServerContext* ctx, const pb::CompareRequest* r, pb::Comparison* out) override {
    return call(ctx, r, [&] { wire::to_wire(JobHistory(core_).compare(r->job(), r->against(), r->gpu()), out); });
  }

  grpc::Status Register(ServerContext* ctx, const pb::RegisterRequest* r, pb::RegisterReply* out) override {
    return call(ctx, r, [&] {
      for (auto* j : {&r->properties(), &r->environment()})
        if (!j->empty() && !nlohmann::json::accept(*j)) throw InvalidArgument("properties and environment are JSON");
      db::Worker w;
      w.name = r->name();
      w.gpu = r->gpu();
      w.properties = r->properties().empty() ? "{}" : r->properties();
      w.environment = r->environment().empty() ? "{}" : r->environment();
      w.environment_key = r->environment_key();
      std::string key;
      int64_t id = core_.register_worker(w, &key);
      wire::versioned(*out).set_worker(id);
      out->set_key(key);
      out->set_lease_s(core_.options().lease_s);
      log(1, "worker_registered", {{"worker", std::to_string(id)}, {"name", w.name}, {"gpu", w.gpu}});
    });
  }

  // The leases the core took, on the wire: nothing here can fail once they are taken (the core read every row).
  grpc::Status Lease(ServerContext* ctx, const pb::LeaseRequest* r, pb::LeaseReply* out) override {
    return call(ctx, r, [&] {
      core_.check_worker_key(r->worker(), r->key());
      wire::versioned(*out);
      for (auto& l : core_.lease(r->worker(), r->max_plans(), r->verifications_only())) {
        auto* p = out->add_plans();
        p->set_plan(l.plan.id);
        p->set_lease(l.plan.lease);
        p->set_job(l.plan.job);
        p->set_checkpoint(l.checkpoint);
        p->set_checkpoint_size(l.checkpoint_size);
        p->set_gpu(l.plan.gpu);
        p->set_knobs(l.plan.knobs);
        p->set_stage(l.plan.stage);
        p->set_repetitions(l.plan.repetitions);
        p->set_warmup(l.warmup);
        for (auto& c : l.prompts) {
          auto* q = p->add_prompts();
          q->set_n_gen(c.n_gen);
          for (auto t : c.tokens) q->add_tokens(t);
        }
        for (auto s : l.stagger_seeds) p->add_stagger_seeds(s);
        p->set_time_limit_s(l.time_limit_s);
        p->set_deadline(l.plan.deadline);
        p->mutable_workload()->set_prompt(l.workload.prompt);
        p->mutable_workload()->set_gen(l.workload.gen);
        p->set_verify(l.plan.verify);
        p->set_profile(l.plan.profile);
        p->set_checkpoint_path(l.checkpoint_path);
        p->set_cutoff_on(l.cutoff_on);
        p->set_cutoff_factor(l.cutoff_factor);
        p->set_best_ms(l.best_ms);
        log(2, "plan_leased", {{"plan", std::to_string(l.plan.id)}, {"worker", std::to_string(r->worker())}});
      }
      out->set_retry_after_s(out->plans_size() ? 0 : 1);
    });
  }

  grpc::Status Heartbeat(ServerContext* ctx, const pb::HeartbeatRequest* r, pb::HeartbeatReply* out) override {
    return call(ctx, r, [&] {
      core_.check_worker_key(r->worker(), r->key());
      wire::versioned(*out);
      for (auto l : core_.heartbeat(r->worker(), {r->leases().begin(), r->leases().end()})) out->add_lost(l);
    });
  }

  grpc::Status Report(ServerContext* ctx, const pb::ReportRequest* r, pb::ReportReply* out) override {
    return call(ctx, r, [&] {
      if (!r->has_result()) throw InvalidArgument("a report carries a result");
      core_.check_worker_key(r->worker(), r->key());
      bool rec = core_.report(r->worker(), r->plan(), r->lease(), wire::from_wire(r->result()));
      wire::versioned(*out).set_recorded(rec);
      log(1, "result",
          {{"plan", std::to_string(r->plan())},
           {"worker", std::to_string(r->worker())},
           {"valid", r->result().valid() ? "1" : "0"},
           {"recorded", rec ? "1" : "0"}});
    });
  }

  grpc::Status FetchCheckpoint(ServerContext* ctx, const pb::FetchRequest* r,
                               grpc::ServerWriter<pb::CheckpointChunk>* out) override {
    return call(ctx, r, [&] {
      auto path = core_.checkpoint_path(r->digest());
      std::ifstream in(path, std::ios::binary);
      if (!in) throw lt::Error("cannot read the stored checkpoint " + path.string());
      wire::send_chunks(
          in, std::filesystem::file_size(path), [](pb::CheckpointChunk& c) { wire::versioned(c); },
          [&](const pb::CheckpointChunk& c) { return !ctx->IsCancelled() && out->Write(c); }, [](uint64_t) {});
    });
  }

 private:
  // Runs one RPC's body: the token, the version, the status codes (serve.hpp).
  template <class Req, class F>
  grpc::Status call(ServerContext* ctx, const Req* req, F&& body) {
    return serve::call(ctx, token_, req, std::forward<F>(body));
  }

  // The client a call comes from: its peer's address less the port ("ipv4:10.0.0.7", "ipv6:[::1]").
  static std::string client_of(const ServerContext& ctx) {
    const std::string peer = ctx.peer();
    const size_t colon = peer.rfind(':');
    return colon == std::string::npos || colon < peer.find(':') + 1 ? peer : peer.substr(0, colon);
  }

  Coordinator& core_;
  std::string token_;
  size_t page_bytes_;
  int max_watches_, max_watches_per_client_;
  std::mutex watch_m_;  // guards watching_ and watching_by_
  int watching_ = 0;
  std::map<std::string, int> watching_by_;  // open Watch streams by client
  std::atomic<bool>& stopping_;
};

}  // namespace

std::unique_ptr<pb::Coordinator::Service> coordinator_service(Coordinator& core, const ServerOptions& o,
                                                              std::atomic<bool>& stopping) {
  return std::make_unique<Service>(core, o, stopping);
}

namespace {
// A TLS file's text.
std::string read_pem(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw lt::Error("cannot read the TLS file " + path + " (--tls-cert and --tls-key go together)");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

// The server, its service, the thread that expires leases and checks time budgets, and the thread that replenishes
// the searches (woken by leases and reports, and every tick), so that no RPC waits on a strategy.
struct Server::Impl {
  std::atomic<bool> stopping{false};
  std::unique_ptr<pb::Coordinator::Service> service;
  std::unique_ptr<grpc::Service> releases;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::thread ticker, replenisher;
  std::mutex m;
  std::condition_variable cv;
  std::mutex wm;  // the replenisher's wake-up
  std::condition_variable wcv;
  bool wanted = false;
  Coordinator* core = nullptr;
};

bool ListenAddress::loopback() const {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

ListenAddress parse_listen(const std::string& listen, const std::string& option) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) throw lt::Error(option + " takes host:port, not \"" + listen + "\"");
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535)
    throw lt::Error(option + "'s port must be a number in 0..65535, not \"" + port + "\"");
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host, std::stoi(port)};
}

void check_listen(const std::string& listen, const std::string& token) {
  const ListenAddress a = parse_listen(listen);
  if (!a.loopback() && token.empty())
    throw lt::Error("listening on " + a.host +
                    " reaches beyond this machine: give a token (--token-file or $LT_TOKEN) that every client and "
                    "worker must present, or listen on 127.0.0.1");
}

Server::Server(Coordinator& core, const ServerOptions& o) : impl_(std::make_unique<Impl>()) {
  check_listen(o.listen, o.token);
  impl_->core = &core;
  core.on_wanted([impl = impl_.get()] {
    {
      std::lock_guard lock(impl->wm);
      impl->wanted = true;
    }
    impl->wcv.notify_one();
  });
  impl_->service = coordinator_service(core, o, impl_->stopping);
  // The standard services beside ours, for probes and tools (grpc_health_probe, kubelet's gRPC probes, grpcurl): the
  // health service (grpc.health.v1, no token: it tells only whether the server serves) and server reflection (the
  // services' schemas, which the source publishes anyway).
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  // (The health protocol's descriptor, named here so that the linker keeps it: reflection describes the health
  // service from it.)
  grpc::health::v1::HealthCheckResponse::descriptor();
  grpc::ServerBuilder b;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!o.tls_cert.empty() || !o.tls_key.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({read_pem(o.tls_key), read_pem(o.tls_cert)});
    creds = grpc::SslServerCredentials(ssl);
  }
  b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);  // a port in use is an error, never shared with another server
  b.AddListeningPort(o.listen, creds, &impl_->port);
  b.RegisterService(impl_->service.get());
  b.RegisterService((impl_->releases = release_service(core, o.token)).get());
  b.SetMaxReceiveMessageSize(16 << 20);
  impl_->server = b.BuildAndStart();
  if (!impl_->server || impl_->port == 0) {
    core.on_wanted(nullptr);
    throw lt::Error("cannot listen on " + o.listen);
  }
  for (const char* name : {pb::Coordinator::service_full_name(), lanetune::v1::Releases::service_full_name()})
    impl_->server->GetHealthCheckService()->SetServingStatus(name, true);
  impl_->replenisher = std::thread([this, &core, tick = o.tick_s] {
    for (;;) {
      {
        std::unique_lock lock(impl_->wm);
        impl_->wcv.wait_for(lock, std::chrono::duration<double>(tick),
                            [&] { return impl_->wanted || impl_->stopping; });
        if (impl_->stopping) break;
        impl_->wanted = false;
      }
      try {
        core.replenish();
      } catch (const std::exception& e) {
        log(0, "replenish_failed", {{"error", e.what()}});
      }
    }
  });
  impl_->ticker = std::thread([this, &core, tick = o.tick_s] {
    std::unique_lock lock(impl_->m);
    while (!impl_->stopping) {
      impl_->cv.wait_for(lock, std::chrono::duration<double>(tick));
      if (impl_->stopping) break;
      try {
        core.tick();
      } catch (const std::exception& e) {
        log(0, "tick_failed", {{"error", e.what()}});
      }
    }
  });
}

Server::~Server() {
  shutdown();
  impl_->server->Wait();
  if (impl_->ticker.joinable()) impl_->ticker.join();
  if (impl_->replenisher.joinable()) impl_->replenisher.join();
  impl_->core->on_wanted(nullptr);
}

int Server::port() const {
  return impl_->port;
}

void Server::wait() {
  impl_->server->Wait();
}

void Server::shutdown() {
  {
    std::lock_guard lock(impl_->m);
    if (impl_->stopping.exchange(true)) return;
  }
  impl_->cv.notify_all();
  { std::lock_guard lock(impl_->wm); }
  impl_->wcv.notify_all();
  if (auto* health = impl_->server->GetHealthCheckService())
    health->Shutdown();  // every service NOT_SERVING while the calls in flight end
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

}  // namespace lt::coord
