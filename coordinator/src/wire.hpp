// Translation between the core's records and the wire's messages (shared by the server and the client).
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <memory>

#include "coordinator/core.hpp"
#include "coordinator/history.hpp"
#include "proto/calls.hpp"
#include "proto/tuning.pb.h"

namespace lt::coord::wire {

inline constexpr uint32_t kMajor = 1;
inline constexpr uint32_t kMinor = 0;

template <class M>
M& versioned(M& m) {
  m.mutable_version()->set_major(kMajor);
  m.mutable_version()->set_minor(kMinor);
  return m;
}

void to_wire(const db::Run& r, lanetune::v1::Result* out);
db::Run from_wire(const lanetune::v1::Result& r);
void to_wire(const JobStatus& s, lanetune::v1::JobStatus* out);
JobStatus from_wire(const lanetune::v1::JobStatus& s);
void to_wire(const WorkerStatus& s, lanetune::v1::WorkerInfo* out);
// Throws InvalidArgument for a state it does not know.
WorkerStatus from_wire(const lanetune::v1::WorkerInfo& s);
void to_wire(const db::HistoryRow& h, lanetune::v1::HistoryEntry* out);
db::HistoryRow from_wire(const lanetune::v1::HistoryEntry& h);
void to_wire(const Comparison& c, lanetune::v1::Comparison* out);
Comparison from_wire(const lanetune::v1::Comparison& c);

// A client call's context (the token, the deadline) and checkpoints as chunk streams: proto/calls.hpp.
using lt::wire::context;
using lt::wire::receive_chunks;
using lt::wire::send_chunks;

// Throws CallError for a failed call to the coordinator at `address`, its status code named and its message (or
// what to do about an unreachable coordinator).
void check(const grpc::Status& s, const std::string& address);

}  // namespace lt::coord::wire
