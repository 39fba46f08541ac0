// The coordinator under a 1.4 M-point grid: how long submit takes, and lease, report and status latencies (p50, p99,
// max) over gRPC on loopback while replay-like workers measure it and a model job trains its cost model beside it.
//
//   build-coord/bench/coordinator_latency [seconds] [workers]
//
// The space is the real compiler's, of a synthesized tiny-qwen3 reshaped to an 8B model's attention (32 query heads
// over 8 key/value heads): 1,419,840 points on the h200, as llama-3.1-8b's. Figures, never assertions: bench/NOTES.md.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <xxhash.h>

#include "compiler/gguf.hpp"
#include "compiler/knobs.hpp"
#include "compiler/model.hpp"
#include "compiler/synth.hpp"
#include "coordinator/client.hpp"
#include "coordinator/core.hpp"
#include "coordinator/server.hpp"
#include "proto/tuning.grpc.pb.h"

namespace {
namespace pb = lanetune::v1;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The real compiler, its knob spaces of the checkpoint reshaped to an 8B model's attention heads.
class EightB : public lt::coord::Compiler {
 public:
  lt::coord::CheckpointInfo inspect(const fs::path& p) override { return real_->inspect(p); }
  std::unique_ptr<lt::coord::SearchSpace> space(const fs::path& p, const lt::coord::GpuKind& gpu,
                                                uint32_t context) override {
    auto file = std::make_shared<const lt::gguf::File>(lt::gguf::File::open(p));
    auto m = lt::model::recognize(*file);
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = m.value_dim = 128;
    m.context = 131072;
    return lt::coord::knob_space(lt::knobs::space(m, {gpu.sms, gpu.arch, int(context)}), file);
  }

 private:
  std::unique_ptr<lt::coord::Compiler> real_ = lt::coord::compiler();
};

// Latencies of one call, in ms.
struct Series {
  std::mutex m;
  std::vector<double> ms;
  void add(double x) {
    std::lock_guard lock(m);
    ms.push_back(x);
  }
  void print(const char* name) {
    std::lock_guard lock(m);
    if (ms.empty()) return std::printf("%-8s none\n", name), void();
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[std::min(ms.size() - 1, size_t(q * double(ms.size())))]; };
    std::printf("%-8s %6zu calls  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", name, ms.size(), at(0.5), at(0.99),
                ms.back());
  }
};

template <class M>
M v1(M m) {
  m.mutable_version()->set_major(1);
  return m;
}

std::unique_ptr<grpc::ClientContext> ctx() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 20;
  const int workers = argc > 2 ? std::atoi(argv[2]) : 4;
  const fs::path dir = fs::temp_directory_path() / ("lt-latency-" + std::to_string(getpid()));
  fs::create_directories(dir);
  lt::synth::Options so;
  so.preset = "tiny-qwen3";
  lt::synth::write(so, dir / "tiny.gguf");

  lt::coord::Options o;
  o.data_dir = dir / "data";
  lt::coord::Coordinator core(dir / "lt.db", o, std::make_unique<EightB>());
  lt::coord::Server server(core, {"127.0.0.1:0", "", "", "", 0.5});
  const std::string address = "127.0.0.1:" + std::to_string(server.port());
  lt::coord::Client client(address, "", 30, "");

  // The model job first (the older job's plans are leased first), the grid beside it: the grid's plans fill the
  // workers whenever the model's queue runs short.
  lt::coord::JobSpec model;
  model.path = (dir / "tiny.gguf").string();
  model.gpus = {"h200"};
  model.strategy = "model";
  model.budget = 100000;  // trains on all it measures for the whole run
  model.seed = 1;
  auto t0 = Clock::now();
  auto m = client.submit(model);
  const double submit_model_ms = ms_since(t0);
  lt::coord::JobSpec grid = model;
  grid.strategy = "grid";
  grid.budget = 0;
  t0 = Clock::now();
  auto g = client.submit(grid);
  const double submit_grid_ms = ms_since(t0);
  std::printf("grid job %lld: %u points planned; submit %.1f ms\n", static_cast<long long>(g.job.id),
              g.gpus.at(0).planned, submit_grid_ms);
  std::printf("model job %lld: submit %.1f ms\n", static_cast<long long>(m.job.id), submit_model_ms);

  Series lease, report, status;
  std::atomic<bool> stop{false};
  std::atomic<long> measured{0};
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      auto stub = pb::Coordinator::NewStub(channel);
      pb::RegisterRequest reg;
      reg.set_name("bench-" + std::to_string(w));
      reg.set_gpu("h200");
      reg.set_environment_key("bench");
      pb::RegisterReply rr;
      if (!stub->Register(ctx().get(), v1(reg), &rr).ok()) return;
      while (!stop) {
        pb::LeaseRequest lr;
        lr.set_worker(rr.worker());
        lr.set_max_plans(4);
        lr.set_key(rr.key());
        pb::LeaseReply out;
        auto t = Clock::now();
        auto st = stub->Lease(ctx().get(), v1(lr), &out);
        lease.add(ms_since(t));
        if (!st.ok()) continue;
        for (auto& p : out.plans()) {
          // A made-up measurement, a few ms of work.
          uint64_t h = XXH64(p.knobs().data(), p.knobs().size(), 1);
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          pb::ReportRequest rep;
          rep.set_worker(rr.worker());
          rep.set_plan(p.plan());
          rep.set_lease(p.lease());
          rep.set_key(rr.key());
          auto* r = rep.mutable_result();
          r->set_valid(true);
          r->set_verified(p.verify());
          r->set_median_ms(1 + double(h % 1000) / 1000);
          r->set_prefill_ms(50 + double(h % 777) / 10);
          r->set_stagger_equal(p.verify());
          r->set_tokens_equal(true);
          pb::ReportReply rout;
          auto tr = Clock::now();
          stub->Report(ctx().get(), v1(rep), &rout);
          report.add(ms_since(tr));
          ++measured;
        }
        if (out.plans().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  threads.emplace_back([&] {
    auto stub = pb::Coordinator::NewStub(channel);
    for (int i = 0; !stop; ++i) {
      pb::JobRef r;
      r.set_job(i % 2 ? g.job.id : m.job.id);
      pb::JobStatus out;
      auto t = Clock::now();
      stub->Status(ctx().get(), v1(r), &out);
      status.add(ms_since(t));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  auto gs = client.status(g.job.id), ms = client.status(m.job.id);
  std::printf(
      "%.0f s, %d workers: %ld plans measured (%.0f a second); grid %u measured, model %u measured, %u verified\n",
      seconds, workers, measured.load(), double(measured.load()) / seconds, gs.gpus.at(0).measured,
      ms.gpus.at(0).measured, ms.gpus.at(0).verified);
  lease.print("lease");
  report.print("report");
  status.print("status");
  client.cancel(g.job.id);
  client.cancel(m.job.id);
  fs::remove_all(dir);
  return 0;
}
