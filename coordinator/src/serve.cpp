// One RPC's frame on the coordinator: tokens, versions and status codes.
#include "serve.hpp"

#include "coordinator/core.hpp"
#include "coordinator/log.hpp"
#include "coordinator/releases.hpp"

namespace lt::coord::serve {

bool authorized(const grpc::ServerContext* ctx, const std::string& token) {
  if (token.empty()) return true;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  return it != md.end() && std::string(it->second.data(), it->second.size()) == "Bearer " + token;
}

void check_version(uint32_t major) {
  if (major != wire::kMajor)
    throw VersionMismatch("protocol version " + std::to_string(major) + " is not spoken here (" +
                          std::to_string(wire::kMajor) + ")");
}

grpc::Status status_of(std::exception_ptr e) {
  using grpc::StatusCode;
  try {
    std::rethrow_exception(e);
  } catch (const VersionMismatch& x) {
    return {StatusCode::FAILED_PRECONDITION, x.what()};
  } catch (const FailedPrecondition& x) {
    return {StatusCode::FAILED_PRECONDITION, x.what()};
  } catch (const InvalidArgument& x) {
    log(1, "invalid_request", {{"error", x.what()}});
    return {StatusCode::INVALID_ARGUMENT, x.what()};
  } catch (const NotFound& x) {
    return {StatusCode::NOT_FOUND, x.what()};
  } catch (const std::exception& x) {
    log(0, "internal_error", {{"error", x.what()}});
    return {StatusCode::INTERNAL, x.what()};
  }
}

}  // namespace lt::coord::serve
