// xxh64 (seed 0), as the lane checks its checkpoint and sidecar by: plain C++, shared by the host side of every lane
// and by lane-tune's tests, which hold it to libxxhash's XXH64.
#include <cstdint>
#include <cstring>

// The rotation xxh64 mixes with.
static uint64_t lk_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
// xxh64 of `n` bytes with seed 0: the checkpoint's identity (gguf::File::digest) and the sidecar's.
static uint64_t lk_xxh64(const uint8_t* p, size_t n) {
  const uint64_t P1 = 11400714785074694791ULL, P2 = 14029467366897019727ULL, P3 = 1609587929392839161ULL,
                 P4 = 9650029242287828579ULL, P5 = 2870177450012600261ULL;
  auto rd64 = [](const uint8_t* q) { uint64_t v; memcpy(&v, q, 8); return v; };
  auto rd32 = [](const uint8_t* q) { uint32_t v; memcpy(&v, q, 4); return (uint64_t)v; };
  auto round = [&](uint64_t acc, uint64_t in) { return lk_rotl(acc + in * P2, 31) * P1; };
  auto merge = [&](uint64_t acc, uint64_t v) { return (acc ^ round(0, v)) * P1 + P4; };
  const uint8_t* end = p + n;
  uint64_t h;
  if (n >= 32) {
    uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
    for (; p + 32 <= end; p += 32) {
      v1 = round(v1, rd64(p)); v2 = round(v2, rd64(p + 8)); v3 = round(v3, rd64(p + 16)); v4 = round(v4, rd64(p + 24));
    }
    h = lk_rotl(v1, 1) + lk_rotl(v2, 7) + lk_rotl(v3, 12) + lk_rotl(v4, 18);
    h = merge(merge(merge(merge(h, v1), v2), v3), v4);
  } else {
    h = P5;
  }
  h += (uint64_t)n;
  for (; p + 8 <= end; p += 8) h = lk_rotl(h ^ round(0, rd64(p)), 27) * P1 + P4;
  if (p + 4 <= end) { h = lk_rotl(h ^ (rd32(p) * P1), 23) * P2 + P3; p += 4; }
  for (; p < end; ++p) h = lk_rotl(h ^ (*p * P5), 11) * P1;
  h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32;
  return h;
}

