// One RPC's frame on the coordinator: tokens, versions and status codes.
#include "serve.hpp"

#include "coordinator/core.hpp"
#include "coordinator/log.hpp"
#include "coordinator/releases.hpp"
#include "db/sqlite.hpp"

namespace lt::coord::serve {

bool authorized(const grpc::ServerContext* ctx, const std::string& token) {
  if (token.empty()) return true;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return false;
  // Compared in constant time (every byte, whatever differs first), so the time taken tells nothing of the token.
  const std::string want = "Bearer " + token;
  const std::string_view got(it->second.data(), it->second.size());
  unsigned char diff = got.size() == want.size() ? 0 : 1;
  for (size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(want[i] ^ (i < got.size() ? got[i] : 0));
  return diff == 0;
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
  } catch (const ResourceExhausted& x) {
    return {StatusCode::RESOURCE_EXHAUSTED, x.what()};
  } catch (const PermissionDenied& x) {
    log(0, "permission_denied", {{"error", x.what()}});
    return {StatusCode::PERMISSION_DENIED, x.what()};
  } catch (const InvalidArgument& x) {
    log(1, "invalid_request", {{"error", x.what()}});
    return {StatusCode::INVALID_ARGUMENT, x.what()};
  } catch (const NotFound& x) {
    return {StatusCode::NOT_FOUND, x.what()};
  } catch (const db::Error& x) {
    // A full disk or a busy database passes: the caller retries later (a worker backs off), nothing was recorded.
    if (x.full()) {
      log(0, "database_full", {{"error", x.what()}});
      return {StatusCode::RESOURCE_EXHAUSTED,
              std::string("the coordinator's disk is full, nothing was recorded: ") + x.what()};
    }
    if (x.busy()) return {StatusCode::UNAVAILABLE, std::string("the coordinator's database is busy: ") + x.what()};
    log(0, "internal_error", {{"error", x.what()}});
    return {StatusCode::INTERNAL, x.what()};
  } catch (const std::exception& x) {
    log(0, "internal_error", {{"error", x.what()}});
    return {StatusCode::INTERNAL, x.what()};
  }
}

}  // namespace lt::coord::serve
