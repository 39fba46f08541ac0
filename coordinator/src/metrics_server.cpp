// /metrics over HTTP (cpp-httplib, Debian's libcpp-httplib-dev): a translator from a GET to Coordinator::metrics and
// prometheus_text, nothing else.
#include <sys/socket.h>

#include <httplib.h>

#include <atomic>
#include <thread>

#include "coordinator/core.hpp"
#include "coordinator/log.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/server.hpp"

namespace lt::coord {

// The HTTP server and the thread its accept loop runs on.
struct MetricsServer::Impl {
  httplib::Server http;
  std::thread loop;
  std::atomic<bool> ended{false};
  int port = 0;
};

MetricsServer::MetricsServer(Coordinator& core, const std::string& listen) : impl_(std::make_unique<Impl>()) {
  const ListenAddress at = parse_listen(listen, "--metrics-listen");
  auto& http = impl_->http;
  // Scrapes are rare and short: two threads serve them (cpp-httplib's default is one per core, at least eight).
  http.new_task_queue = [] { return new httplib::ThreadPool(2); };
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, which would share a port in use with another
  // server instead of failing.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  http.Get("/metrics", [&core](const httplib::Request&, httplib::Response& res) {
    try {
      res.set_content(prometheus_text(core.metrics()), "text/plain; version=0.0.4; charset=utf-8");
    } catch (const std::exception& e) {
      log(0, "metrics_failed", {{"error", e.what()}});
      res.status = 503;
      res.set_content(std::string("the coordinator's metrics cannot be read now: ") + e.what() + "\n", "text/plain");
    }
  });
  impl_->port = at.port == 0 ? http.bind_to_any_port(at.host) : (http.bind_to_port(at.host, at.port) ? at.port : -1);
  if (impl_->port <= 0) throw lt::Error("cannot listen on " + listen + " for /metrics (--metrics-listen)");
  impl_->loop = std::thread([impl = impl_.get()] {
    impl->http.listen_after_bind();
    impl->ended = true;
  });
  // Running before the constructor returns, so that stop() in the destructor always finds the loop to end.
  while (!http.is_running() && !impl_->ended) std::this_thread::yield();
}

MetricsServer::~MetricsServer() {
  impl_->http.stop();
  impl_->loop.join();
}

int MetricsServer::port() const {
  return impl_->port;
}

}  // namespace lt::coord
