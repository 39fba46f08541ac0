// The service under faults and hostile input, on loopback with a real SQLite file: a damaged row fails what it
// belongs to and nothing else, a worker waits out a coordinator whose disk is full, and a checkpoint named by path is
// read once into the store, whatever happens to the file meanwhile.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "cluster.hpp"
#include "coordinator/server.hpp"
#include "db/sqlite.hpp"
#include "fake_compiler.hpp"
#include "worker/worker.hpp"

namespace lt::test {
namespace {

// A job whose stored prompts are corrupt, and a configuration of another job whose stored knobs are: the first job
// fails saying why, the configuration's plan fails (bad_plan) without a worker measuring it, and every other plan is
// measured, each leased once (no lease was taken and lost).
TEST(Faults, AMalformedRowFailsItsJobOrItsPlanWhileTheRestIsMeasured) {
  Cluster c;
  c.start_coordinator();
  const int64_t broken_job = c.submit("--gpus h200 --strategy random --budget 4");
  const int64_t job = c.submit("--gpus h200 --strategy random --budget 6");
  const std::string b = std::to_string(broken_job), j = std::to_string(job);
  c.exec("UPDATE jobs SET prompts = '[{\"n_gen\": 8, \"tokens\": ' WHERE id = " + b);
  const int64_t broken_plan = c.query("SELECT MIN(id) FROM plans WHERE job = " + j);
  const std::string p = std::to_string(broken_plan);
  c.exec("UPDATE configurations SET knobs = '{\"numerics\": ' WHERE id = (SELECT config FROM plans WHERE id = " + p +
         ")");
  c.start_worker("a", 10);
  EXPECT_EQ(c.wait_done(job, 60), "done");
  auto status = c.cli("status " + b);
  EXPECT_NE(status.out.find("failed"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("prompts"), std::string::npos) << status.out;
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE job = " + b), 0);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE state IN ('pending', 'leased') AND job = " + b), 0);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE failure = 'bad_plan' AND worker = 0 AND plan = " + p), 1);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE job = " + j), 6);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM runs WHERE failure = 'bad_plan' AND job = " + j), 1);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM plans WHERE state != 'done' AND job = " + j), 0);
  EXPECT_EQ(c.query("SELECT SUM(attempts) FROM plans"), 0);
}

// The worker's link to a coordinator, telling of each registration the coordinator could not take.
struct WatchedLink : worker::Link {
  std::unique_ptr<worker::Link> link;
  std::mutex m;
  std::condition_variable changed;
  std::vector<std::string> refused;  // under m: each refusal's message

  explicit WatchedLink(std::unique_ptr<worker::Link> l) : link(std::move(l)) {}
  std::pair<int64_t, double> register_worker(const std::string& name, const worker::Gpu& gpu) override {
    try {
      return link->register_worker(name, gpu);
    } catch (const worker::LinkError& e) {
      {
        std::lock_guard l(m);
        refused.push_back(e.what());
      }
      changed.notify_all();
      throw;
    }
  }
  std::vector<worker::LeasedPlan> lease(int64_t w, uint32_t max, bool verifications_only) override {
    return link->lease(w, max, verifications_only);
  }
  std::vector<int64_t> heartbeat(int64_t w, const std::vector<int64_t>& l) override { return link->heartbeat(w, l); }
  bool report(int64_t w, const worker::LeasedPlan& p, const worker::Result& r) override {
    return link->report(w, p, r);
  }
  void fetch(const std::string& d, const std::filesystem::path& p) override { link->fetch(d, p); }
};

// A runner that is never asked: the coordinator has no job.
struct IdleRunner : worker::Runner {
  bool needs_checkpoint() const override { return false; }
  std::function<worker::Result()> prepare(const worker::LeasedPlan&, const std::filesystem::path&) override {
    ADD_FAILURE() << "no plan was leased";
    return [] { return worker::Result{}; };
  }
};

// The coordinator's database cannot grow (its disk full): a worker's registration is refused with RESOURCE_EXHAUSTED,
// saying so, and the worker tries again with a backoff instead of exiting; once there is room it registers.
TEST(Faults, AWorkerWaitsOutACoordinatorWhoseDiskIsFull) {
  TempDir dir;
  coord::Options o;
  o.data_dir = dir / "data";
  coord::Coordinator core(dir / "lt.db", o, std::make_unique<FakeCompiler>(3));
  coord::Server server(core, coord::ServerOptions{"127.0.0.1:0", "", "", "", 0.2});
  // No page more than the file has; a worker's row (a GPU name of 30 kB) needs new pages.
  core.with_store([](db::Store& st, double) { st.connection().exec_script("PRAGMA max_page_count = 1"); });
  auto link = std::make_unique<WatchedLink>(worker::grpc_link("127.0.0.1:" + std::to_string(server.port()), "", ""));
  WatchedLink* watched = link.get();
  worker::Options wo;
  wo.name = "w";
  wo.gpu.kind = "h100";
  wo.gpu.name = std::string(30000, 'x');
  wo.exit_when_idle = true;
  wo.retry_min_s = 0.01;
  wo.retry_max_s = 0.05;
  worker::Worker w(wo, std::move(link), std::make_unique<IdleRunner>());
  std::exception_ptr failed;
  std::thread running([&] {
    try {
      w.run();
    } catch (...) {
      failed = std::current_exception();
    }
  });
  {
    std::unique_lock l(watched->m);
    EXPECT_TRUE(watched->changed.wait_for(l, std::chrono::seconds(30), [&] { return watched->refused.size() >= 3; }));
    for (auto& why : watched->refused) EXPECT_NE(why.find("disk is full"), std::string::npos) << why;
  }
  core.with_store([](db::Store& st, double) { st.connection().exec_script("PRAGMA max_page_count = 1073741823"); });
  running.join();
  EXPECT_FALSE(failed) << "the worker gave up";
  EXPECT_EQ(core.with_store([](db::Store& st, double) { return st.worker(1).has_value(); }), true);
}

// Reads a whole file.
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A file's content digest as `lane-tune digest` prints it.
std::string digest_of(const std::filesystem::path& file) {
  const Output d = run(cli() + " digest --format csv " + file.string());
  const size_t row = d.out.find("\r\n") + 2;
  return d.status == 0 ? d.out.substr(row, 32) : "(" + d.out + ")";
}

// A job naming its checkpoint by path holds a copy in the coordinator's store, digested as it was read: the file under
// the allowed folder cut short after the submit changes nothing, not even when a restarted coordinator describes the
// knob space again for the search.
TEST(Faults, APathCheckpointIsReadOnceIntoTheStore) {
  Cluster c;
  c.start_coordinator();
  const std::string d = digest_of(c.checkpoint());
  ASSERT_EQ(d.size(), 32u) << d;
  const int64_t job = c.submit("--path --gpus h200 --strategy model --budget 12");
  const auto stored = c.path("lt.db.data") / "checkpoints" / (d + ".gguf");
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM checkpoints WHERE digest = '" + d + "' AND path = '" + stored.string() + "'"),
            1);
  std::filesystem::resize_file(c.checkpoint(), 1000);
  c.kill_coordinator();
  c.start_coordinator();
  c.start_worker("a", 10);
  EXPECT_EQ(c.wait_done(job, 120), "done");
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM searches WHERE note LIKE '%stopped%'"), 0);
  EXPECT_GE(c.query("SELECT COUNT(*) FROM runs WHERE job = " + std::to_string(job)), 12);
  EXPECT_EQ(digest_of(stored), d);
}

// The checkpoint is cut short and written again over and over while jobs name it by path: each submit either takes
// the checkpoint whole (its digest) or is refused saying why, and the coordinator stays up.
TEST(Faults, ACheckpointRewrittenWhileItIsReadLeavesTheCoordinatorUp) {
  Cluster c;
  c.start_coordinator();
  const std::string whole = slurp(c.checkpoint());
  const std::string d = digest_of(c.checkpoint());
  std::atomic<bool> done{false};
  std::atomic<int> rewrites{0};
  std::thread writer([&] {
    while (!done) {
      std::filesystem::resize_file(c.checkpoint(), whole.size() / 2);
      std::ofstream(c.checkpoint(), std::ios::binary | std::ios::trunc)
          .write(whole.data(), std::streamsize(whole.size()));
      ++rewrites;
      std::this_thread::yield();
    }
  });
  int taken = 0;
  for (int i = 0; i < 12; ++i) {
    auto r = c.cli("submit " + c.checkpoint().string() + " --path --gpus h200 --strategy random --budget 1");
    if (r.status == 0) {
      ++taken;
      continue;
    }
    EXPECT_TRUE(r.out.find("changed while the coordinator read it") != std::string::npos ||
                r.out.find("not a checkpoint") != std::string::npos || r.out.find("not a GGUF") != std::string::npos)
        << r.out;
  }
  done = true;
  writer.join();
  EXPECT_GT(rewrites.load(), 12);
  EXPECT_TRUE(c.coordinator_running());
  EXPECT_EQ(c.cli("status").status, 0);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM jobs"), taken);
  EXPECT_EQ(c.query("SELECT COUNT(*) FROM checkpoints WHERE digest != '" + d + "'"), 0);
}

}  // namespace
}  // namespace lt::test
