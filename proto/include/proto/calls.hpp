// The hand-written part of the wire, shared by every client of the coordinator (the CLI's clients, the release
// client, the worker) and by the server: the channel, a call's context, and checkpoints as streams of chunks.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <cstdint>
#include <istream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

#include "proto/tuning.pb.h"

namespace lt::wire {

// A channel to `address`: plaintext when `tls_ca` is empty, else TLS checked against that PEM file; replies of up to
// 64 MiB. Throws std::runtime_error when the certificate file cannot be read.
std::shared_ptr<grpc::Channel> channel(const std::string& address, const std::string& tls_ca);

// A call's context: the bearer token when there is one, and a deadline `timeout_s` away (none for 0).
std::unique_ptr<grpc::ClientContext> context(const std::string& token, double timeout_s);

// Streams `in` (`total` bytes) as CheckpointChunks of 1 MiB (their version set by `version`) to `write`, which
// returns false to stop; `sent(offset)` after each chunk. Returns whether the whole stream went.
template <class Version, class Write, class Sent>
bool send_chunks(std::istream& in, uint64_t total, Version&& version, Write&& write, Sent&& sent) {
  std::string buf(1 << 20, '\0');
  uint64_t offset = 0;
  for (;;) {
    in.read(buf.data(), std::streamsize(buf.size()));
    const auto n = size_t(in.gcount());
    if (n == 0) return true;
    lanetune::v1::CheckpointChunk c;
    version(c);
    c.set_offset(offset);
    c.set_total_size(total);
    c.set_data(buf.data(), n);
    if (!write(c)) return false;
    offset += n;
    sent(offset);
  }
}

// Writes the chunks `reader` yields to `out` in order; throws std::runtime_error for a chunk out of order. The
// caller finishes the call and checks `out`.
template <class Reader>
void receive_chunks(Reader& reader, std::ostream& out) {
  lanetune::v1::CheckpointChunk c;
  uint64_t offset = 0;
  while (reader.Read(&c)) {
    if (c.offset() != offset) throw std::runtime_error("the checkpoint arrived out of order");
    out.write(c.data().data(), std::streamsize(c.data().size()));
    offset += c.data().size();
  }
}

}  // namespace lt::wire
