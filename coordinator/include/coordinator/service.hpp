// The Coordinator service without a server around it: the RPC handlers Server registers, for calling in process (the
// RPC fuzz target decodes requests and hands them to these).
#pragma once

#include <atomic>
#include <memory>

#include "coordinator/server.hpp"
#include "proto/tuning.grpc.pb.h"

namespace lt::coord {

// The handlers: each checks the token (ServerOptions::token) and the protocol version, validates the request, and
// calls `core`; `stopping` ends the Watch streams. REQUIRES: `core` and `stopping` outlive the service.
std::unique_ptr<lanetune::v1::Coordinator::Service> coordinator_service(Coordinator& core, const ServerOptions& o,
                                                                        std::atomic<bool>& stopping);

}  // namespace lt::coord
