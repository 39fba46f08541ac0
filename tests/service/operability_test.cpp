// The coordinator as service managers and tools see it: readiness on $NOTIFY_SOCKET (systemd's Type=notify), the
// standard gRPC health service and server reflection, on a real `lane-tune coordinator` process on loopback.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>

#include "cluster.hpp"
#include "proto/health.grpc.pb.h"
#include "support/test_support.hpp"

namespace lt::test {
namespace {
namespace health = grpc::health::v1;

// A datagram socket in the abstract namespace that a process told of it by $NOTIFY_SOCKET sends its state to, as a
// service manager's is.
class NotifySocket {
 public:
  NotifySocket() : name_("@lane-tune-test-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device()())) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::copy(name_.begin() + 1, name_.end(), a.sun_path + 1);  // sun_path[0] = 0: the abstract namespace
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), socklen_t(offsetof(sockaddr_un, sun_path) + name_.size())) != 0)
      ADD_FAILURE() << "cannot bind the notify socket";
  }
  ~NotifySocket() { close(fd_); }
  // The value $NOTIFY_SOCKET takes.
  const std::string& name() const { return name_; }
  // The next message, or "" when none comes within `timeout_s`.
  std::string next(double timeout_s) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, int(timeout_s * 1000)) != 1) return "";
    char b[4096];
    const ssize_t n = recv(fd_, b, sizeof b, 0);
    return n > 0 ? std::string(b, size_t(n)) : "";
  }

 private:
  std::string name_;
  int fd_ = -1;
};

// A coordinator process on a free loopback port, told of `notify`; its port once the port file is written.
struct Coordinator {
  TempDir dir;
  std::unique_ptr<Process> process;
  explicit Coordinator(const NotifySocket& notify) {
    process =
        std::make_unique<Process>(std::vector<std::string>{"/usr/bin/env", "NOTIFY_SOCKET=" + notify.name(), cli(),
                                                           "coordinator", "--db", (dir / "lt.db").string(), "--listen",
                                                           "127.0.0.1:0", "--port-file", (dir / "port").string()},
                                  dir / "coordinator.log");
  }
  int port() const {
    int p = 0;
    std::ifstream(dir / "port") >> p;
    return p;
  }
};

// The length-delimited fields of a protobuf message's bytes, by field number, in order (other wire types skipped).
std::vector<std::pair<int, std::string>> fields(const std::string& bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), int(bytes.size()));
  std::vector<std::pair<int, std::string>> v;
  for (uint32_t tag; (tag = in.ReadTag()) != 0;) {
    const int field = int(tag >> 3), wire = int(tag & 7);
    if (wire == 2) {
      uint32_t n = 0;
      std::string s;
      if (!in.ReadVarint32(&n) || !in.ReadString(&s, int(n))) break;
      v.emplace_back(field, std::move(s));
    } else if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) {
      break;
    }
  }
  return v;
}

// One request and its reply on the server's reflection stream (grpc.reflection.v1alpha.ServerReflection), as bytes:
// the reflection protocol's messages are not in Debian's headers, so its two fields used here are written by hand.
std::string reflect(const std::shared_ptr<grpc::Channel>& channel, const std::string& request) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto call = stub.PrepareCall(&ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&](int id) { return cq.Next(&tag, &ok) && tag == reinterpret_cast<void*>(intptr_t(id)) && ok; };
  call->StartCall(reinterpret_cast<void*>(1));
  if (!step(1)) return "";
  grpc::Slice slice(request);
  grpc::ByteBuffer out(&slice, 1);
  call->Write(out, reinterpret_cast<void*>(2));
  if (!step(2)) return "";
  grpc::ByteBuffer in;
  call->Read(&in, reinterpret_cast<void*>(3));
  if (!step(3)) return "";
  call->WritesDone(reinterpret_cast<void*>(4));
  step(4);
  grpc::Status st;
  call->Finish(&st, reinterpret_cast<void*>(5));
  step(5);
  std::vector<grpc::Slice> slices;
  (void)in.Dump(&slices);
  std::string reply;
  for (auto& s : slices) reply.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return reply;
}

// A length-delimited field `field` holding `value`, as protobuf writes it (values under 128 bytes).
std::string field_bytes(int field, const std::string& value) {
  return std::string{char(field << 3 | 2), char(value.size())} + value;
}

// Started as systemd starts it (Type=notify), the coordinator says READY=1 once it serves: its port file is written,
// and the health service answers SERVING for the server and each of its services; SIGTERM says STOPPING=1 and ends it.
TEST(Operability, ACoordinatorSaysReadyWhenItServesAndItsHealthServiceAnswersServing) {
  NotifySocket notify;
  Coordinator c(notify);
  const std::string ready = notify.next(60);
  ASSERT_EQ(ready.rfind("READY=1\n", 0), 0u) << "the coordinator said \"" << ready << "\"";
  ASSERT_GT(c.port(), 0) << "READY=1 came before the port file";
  EXPECT_NE(ready.find("STATUS=serving on 127.0.0.1:" + std::to_string(c.port())), std::string::npos) << ready;

  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(c.port()), grpc::InsecureChannelCredentials());
  auto stub = health::Health::NewStub(channel);
  auto check = [&](const std::string& service, health::HealthCheckResponse* out) {
    grpc::ClientContext ctx;  // no token: health checks need none
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    health::HealthCheckRequest r;
    r.set_service(service);
    return stub->Check(&ctx, r, out);
  };
  for (const char* service : {"", "lanetune.v1.Coordinator", "lanetune.v1.Releases"}) {
    health::HealthCheckResponse out;
    auto st = check(service, &out);
    ASSERT_TRUE(st.ok()) << service << ": " << st.error_message();
    EXPECT_EQ(out.status(), health::HealthCheckResponse::SERVING) << service;
  }
  health::HealthCheckResponse out;
  EXPECT_EQ(check("lanetune.v1.NoSuchService", &out).error_code(), grpc::StatusCode::NOT_FOUND);

  c.process->signal(SIGTERM);
  EXPECT_EQ(notify.next(30), "STOPPING=1");
  EXPECT_EQ(c.process->wait(30), 0);
}

// Server reflection lists the coordinator's services (the health service among them) and describes each, the health
// protocol too: what grpcurl needs to call them without the .proto files.
TEST(Operability, ReflectionListsAndDescribesTheCoordinatorsServices) {
  NotifySocket notify;
  Coordinator c(notify);
  ASSERT_EQ(notify.next(60).rfind("READY=1", 0), 0u);
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(c.port()), grpc::InsecureChannelCredentials());

  // ServerReflectionRequest.list_services (7) → ServerReflectionResponse.list_services_response (6), whose
  // ServiceResponse entries (1) carry a name (1).
  std::set<std::string> services;
  for (auto& [field, list] : fields(reflect(channel, field_bytes(7, ""))))
    if (field == 6)
      for (auto& [entry, service] : fields(list))
        for (auto& [name_field, name] : fields(service))
          if (entry == 1 && name_field == 1) services.insert(name);
  EXPECT_EQ(services, (std::set<std::string>{"grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection",
                                             "lanetune.v1.Coordinator", "lanetune.v1.Releases"}));

  // ServerReflectionRequest.file_containing_symbol (4) → file_descriptor_response (4), not error_response (7).
  for (const char* symbol : {"grpc.health.v1.Health", "lanetune.v1.Coordinator"}) {
    std::set<int> answered;
    for (auto& [field, body] : fields(reflect(channel, field_bytes(4, symbol)))) answered.insert(field);
    EXPECT_TRUE(answered.count(4) && !answered.count(7)) << symbol << " is not described";
  }
}

}  // namespace
}  // namespace lt::test
