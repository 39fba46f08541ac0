// A checkpoint file's content digest, streamed a megabyte at a time.
#include "compiler/digest.hpp"

#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "compiler/error.hpp"

namespace lt {

std::string content_digest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string());
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  std::vector<char> buf(1 << 20);
  while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0)
    XXH3_128bits_update(st, buf.data(), size_t(in.gcount()));
  const XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

}  // namespace lt
