// One RPC's frame on the coordinator, shared by its services: the token check, the protocol version check, and the
// core's errors turned into gRPC status codes.
#pragma once

#include <grpcpp/grpcpp.h>

#include <exception>
#include <string>

#include "wire.hpp"

namespace lt::coord::serve {

// A peer speaking another major version of the protocol (FAILED_PRECONDITION).
struct VersionMismatch : lt::Error {
  using lt::Error::Error;
};

// Whether the call carries `token` as a bearer token (or none is required).
bool authorized(const grpc::ServerContext* ctx, const std::string& token);
// Throws VersionMismatch unless `major` is the protocol version spoken here.
void check_version(uint32_t major);
// The status of the exception the body threw (InvalidArgument, NotFound, FailedPrecondition, ...; a full disk is
// RESOURCE_EXHAUSTED, a busy database UNAVAILABLE); internal errors are logged.
grpc::Status status_of(std::exception_ptr e);

// Runs one RPC's body for a request `req` (null: one without a version) under `token`.
template <class Req, class F>
grpc::Status call(const grpc::ServerContext* ctx, const std::string& token, const Req* req, F&& body) {
  if (!authorized(ctx, token))
    return grpc::Status{grpc::StatusCode::UNAUTHENTICATED, "a valid token is required (--token or $LT_TOKEN)"};
  try {
    if (req) check_version(req->version().major());
    body();
    return grpc::Status::OK;
  } catch (...) {
    return status_of(std::current_exception());
  }
}

}  // namespace lt::coord::serve
