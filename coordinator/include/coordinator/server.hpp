// The coordinator's gRPC server: translates the Coordinator service's RPCs into calls on the core.
#pragma once

#include <memory>
#include <string>

#include "coordinator/core.hpp"

namespace lt::coord {

// Where the server listens and the token every call must carry (none: no check).
struct ServerOptions {
  // host:port (port 0: any free one). A host beyond loopback needs a token: the server refuses to start without one.
  std::string listen = "127.0.0.1:7117";
  std::string token;
  std::string tls_cert, tls_key;  // PEM files: serve TLS (none: plaintext, for loopback and trusted networks)
  double tick_s = 1;              // how often expired leases and time budgets are checked
  size_t results_page_bytes = 8 << 20;  // a Results reply's size at most (a page holds at least one run)
  int max_watches = 64;                 // Watch streams open at once (each holds a thread)
  // Watch streams open at once from one client (the host a call comes from), so that one client cannot take them all.
  int max_watches_per_client = 16;
};

// An address to listen on: the host (brackets of an IPv6 address removed) and the port.
struct ListenAddress {
  std::string host;
  int port = 0;
  // Whether the host is this machine's loopback (localhost, 127.x.x.x, ::1).
  bool loopback() const;
};

// Splits host:port (also [v6]:port) with a port in 0..65535; throws lt::Error naming `option` and what is wrong.
ListenAddress parse_listen(const std::string& listen, const std::string& option = "--listen");

// Checks an address to listen on: host:port with a port in 0..65535, and a token when the host is not loopback;
// throws lt::Error saying what is wrong.
void check_listen(const std::string& listen, const std::string& token);

// A running server; stops when destroyed.
class Server {
 public:
  Server(Coordinator& core, const ServerOptions& o);
  ~Server();
  int port() const;
  // Blocks until shutdown() (from another thread or a signal handler's thread).
  void wait();
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lt::coord
