// A checkpoint file's content digest, streamed a megabyte at a time.
#include "compiler/digest.hpp"

#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "compiler/error.hpp"

namespace lt {

std::string hex64(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

std::string hex128(uint64_t high, uint64_t low) {
  return hex64(high) + hex64(low);
}

std::string content_digest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec) throw NotFound("cannot read " + path.string() + ": no such file");
    throw Error("cannot read " + path.string());
  }
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  std::vector<char> buf(1 << 20);
  while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0)
    XXH3_128bits_update(st, buf.data(), size_t(in.gcount()));
  const XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  if (in.bad()) throw Error("cannot read " + path.string() + " to its end (a folder, or a read error)");
  return hex128(h.high64, h.low64);
}

bool is_digest(const std::string& d) {
  return d.size() == 32 && d.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace lt
