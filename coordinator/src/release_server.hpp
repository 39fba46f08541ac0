// The Releases gRPC service the coordinator's server registers next to the Coordinator service.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "coordinator/releases.hpp"

namespace lt::coord {

// The Releases service on `core`'s database, checking `token` (none: no check) on every call.
std::unique_ptr<grpc::Service> release_service(Coordinator& core, const std::string& token);

}  // namespace lt::coord
