// The hand-written part of the wire: the channel and a call's context.
#include "proto/calls.hpp"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <chrono>
#include <fstream>
#include <iterator>

namespace lt::wire {

std::shared_ptr<grpc::Channel> channel(const std::string& address, const std::string& tls_ca) {
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!tls_ca.empty()) {
    std::ifstream in(tls_ca);
    if (!in) throw std::runtime_error("cannot read the TLS CA certificate " + tls_ca);
    grpc::SslCredentialsOptions o;
    o.pem_root_certs.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    creds = grpc::SslCredentials(o);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, creds, args);
}

std::unique_ptr<grpc::ClientContext> context(const std::string& token, double timeout_s) {
  auto c = std::make_unique<grpc::ClientContext>();
  if (!token.empty()) c->AddMetadata("authorization", "Bearer " + token);
  if (timeout_s > 0)
    c->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(timeout_s)));
  return c;
}

}  // namespace lt::wire
