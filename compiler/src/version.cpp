// lane-tune's version and the nvcc it builds lanes with.
#include "compiler/version.hpp"

#include <cstdlib>

namespace lt {

const char* version() {
  return LT_VERSION;
}

std::string nvcc_path() {
  if (const char* env = std::getenv("LT_NVCC"); env && *env) return env;
  return LT_NVCC_DEFAULT;
}

}  // namespace lt
