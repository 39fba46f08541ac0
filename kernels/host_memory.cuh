// The lane's host runtime (after host.cuh): the checkpoint mapped and checked, the sidecar read, the pools the standing
// arrays are carved from, where the matrices live, and their uploads' host work (a program's uploads by format are
// upload.cuh's, over these).

#include <memory>
#include <thread>

const uint8_t* lk_open_checkpoint(const char* path, uint64_t size, uint64_t data_start, uint64_t digest) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) { fprintf(stderr, "cannot open the checkpoint %s: %s\n", path, strerror(errno)); exit(LK_EXIT_WRONG_CHECKPOINT); }
  struct stat sb;
  fstat(fd, &sb);
  if ((uint64_t)sb.st_size != size) { fprintf(stderr, "%s is not the checkpoint this program was compiled against (size %lld, not %llu)\n", path, (long long)sb.st_size, (unsigned long long)size); exit(LK_EXIT_WRONG_CHECKPOINT); }
  void* m = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) { fprintf(stderr, "cannot map %s: %s\n", path, strerror(errno)); exit(LK_EXIT_WRONG_CHECKPOINT); }
  if (lk_xxh64((const uint8_t*)m, data_start) != digest) { fprintf(stderr, "%s is not the checkpoint this program was compiled against (its digest differs)\n", path); exit(LK_EXIT_WRONG_CHECKPOINT); }
  return (const uint8_t*)m;
}

std::vector<uint8_t> lk_read_sidecar(const char* path, uint64_t bytes, uint64_t digest) {
  std::vector<uint8_t> side(bytes);
  FILE* f = fopen(path, "rb");
  bool ok = f && fread(side.data(), 1, bytes, f) == bytes && fgetc(f) == EOF && lk_xxh64(side.data(), bytes) == digest;
  if (f) fclose(f);
  if (!ok) { fprintf(stderr, "%s is not this program's sidecar\n", path); exit(LK_EXIT_WRONG_CHECKPOINT); }
  return side;
}

unsigned char *lk_pool = nullptr, *lk_hpool = nullptr;
size_t lk_pool_bytes = 0, lk_pool_at = 0, lk_hpool_bytes = 0, lk_hpool_at = 0;

int lk_place(size_t device_bytes, size_t fixed, const size_t* order, int n) {
  CK(cudaFree(0));
  size_t free_b = 0, total_b = 0;
  CK(cudaMemGetInfo(&free_b, &total_b));
  const size_t spare = 256u << 20;
  size_t budget = device_bytes != SIZE_MAX ? device_bytes : (free_b > spare ? free_b - spare : 0);
  if (device_bytes != SIZE_MAX && device_bytes > free_b) budget = free_b > spare ? free_b - spare : 0;
  if (fixed > budget) {
    fprintf(stderr, "the caches, arena and vectors take %zu bytes of the %zu the device can give; the lane cannot fit\n", fixed, budget);
    exit(LK_EXIT_DOES_NOT_FIT);
  }
  size_t dev = fixed, host = 0;
  for (int i = 0; i < n; ++i) dev += lk_round(order[i]);
  int moved = 0;
  while (dev > budget && moved < n) { dev -= lk_round(order[moved]); host += lk_round(order[moved]); ++moved; }
  lk_pool_bytes = dev;
  if (cudaMalloc(&lk_pool, dev) != cudaSuccess) { fprintf(stderr, "cannot allocate %zu device bytes\n", dev); exit(LK_EXIT_DOES_NOT_FIT); }
  if (host) {
    void* h = nullptr;
    if (cudaHostAlloc(&h, host, cudaHostAllocMapped) != cudaSuccess) { fprintf(stderr, "cannot allocate %zu mapped host bytes\n", host); exit(LK_EXIT_DOES_NOT_FIT); }
    CK(cudaHostGetDevicePointer((void**)&lk_hpool, h, 0));
    lk_hpool_bytes = host;
  }
  return moved;
}

// Runs f(first, last) over [0, n) in contiguous ranges of at least `grain`, one a hardware thread (the caller's among
// them): a load's host work (the repacking below, ~1 GB/s a core) spread over the machine's cores.
template <class F>
static void lk_parallel(size_t n, size_t grain, const F& f) {
  static const size_t threads = std::max(1u, std::thread::hardware_concurrency());  // (a system call: once)
  const size_t parts = std::min(threads, (n + grain - 1) / std::max<size_t>(grain, 1));
  if (parts <= 1) {
    f(size_t(0), n);
    return;
  }
  const size_t per = (n + parts - 1) / parts;
  std::vector<std::thread> others;
  for (size_t p = 1; p < parts && p * per < n; ++p)
    others.emplace_back([&f, p, per, n] { f(p * per, std::min(n, (p + 1) * per)); });
  f(size_t(0), std::min(n, per));
  for (std::thread& t : others) t.join();
}

// The load's host staging area: at least `bytes`, grown to the largest matrix and reused by each (its pages touched
// once: first touches of fresh gigabytes cost a load more than its host work), uninitialized, freed by lk_planes_done.
static std::unique_ptr<uint8_t[]> lk_staging;
static size_t lk_staging_bytes = 0;
static uint8_t* lk_stage(size_t bytes) {
  if (bytes > lk_staging_bytes) {
    lk_staging.reset(new uint8_t[bytes]);
    lk_staging_bytes = bytes;
  }
  return lk_staging.get();
}

// The load's copies to the device, pipelined: host work fills a slice of pinned staging while the copy stream takes
// the slice before it (two slices in turn, each refilled only after its copies are done), so that the repacking on
// the host's cores and the copies overlap and the copies run at pinned memory's rate. Open from the first upload until
// lk_planes_done, which waits for the last copy; an upload after it copies synchronously.
struct lk_load_pipe {
  static constexpr size_t kSlice = 32u << 20;
  uint8_t* buf[2] = {};
  cudaEvent_t copied[2] = {};
  cudaStream_t st = nullptr;
  int turn = 0;
};
static lk_load_pipe* lk_pipe = nullptr;
static bool lk_pipe_closed = false;

static lk_load_pipe* lk_pipe_open() {
  if (lk_pipe_closed) return nullptr;
  if (!lk_pipe) {
    lk_pipe = new lk_load_pipe;
    for (int i = 0; i < 2; ++i) {
      // (where the host will not pin 64 MB, the load goes on through pageable staging, only slower)
      if (cudaHostAlloc((void**)&lk_pipe->buf[i], lk_load_pipe::kSlice, cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        if (i) CK(cudaFreeHost(lk_pipe->buf[0]));
        delete lk_pipe;
        lk_pipe = nullptr;
        lk_pipe_closed = true;
        return nullptr;
      }
    }
    for (int i = 0; i < 2; ++i) CK(cudaEventCreateWithFlags(&lk_pipe->copied[i], cudaEventDisableTiming));
    CK(cudaStreamCreateWithFlags(&lk_pipe->st, cudaStreamNonBlocking));
  }
  return lk_pipe;
}

// Runs over [0, n) units of `unit` bytes of staging each, a slice at a time: fill(buffer, first, last) writes the
// slice's staging (on the host's cores), send(buffer, first, last, stream) issues its copies. Without the pipe (after
// lk_planes_done, or where the host would not pin its staging) one slice of pageable staging and synchronous copies.
template <class Fill, class Send>
static void lk_pipeline(size_t n, size_t unit, const Fill& fill, const Send& send) {
  lk_load_pipe* p = lk_pipe_open();
  const size_t per = std::max<size_t>(1, lk_load_pipe::kSlice / std::max<size_t>(unit, 1));
  if (!p) {
    uint8_t* b = lk_stage(std::min(n, per) * unit);
    for (size_t first = 0; first < n; first += per) {
      const size_t last = std::min(n, first + per);
      fill(b, first, last);
      send(b, first, last, (cudaStream_t)0);
      CK(cudaStreamSynchronize(0));
    }
    return;
  }
  for (size_t first = 0; first < n; first += per) {
    const size_t last = std::min(n, first + per);
    const int i = p->turn;
    p->turn ^= 1;
    CK(cudaEventSynchronize(p->copied[i]));  // (its slice's copies done: the buffer is free)
    fill(p->buf[i], first, last);
    send(p->buf[i], first, last, p->st);
    CK(cudaEventRecord(p->copied[i], p->st));
  }
}

void lk_upload_q8_rows(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host, signed char** q,
                       __half** s) {
  const size_t nb = rows * cols / 32;
  *q = lk_carve<signed char>(rows * cols, host);
  *s = lk_carve<__half>(nb, host);
  const uint8_t* src = file + offset;
  // A slice of blocks: its int8 rows, then its scales.
  lk_pipeline(
      nb, 34,
      [&](uint8_t* b, size_t first, size_t last) {
        uint8_t* const hs = b + (last - first) * 32;
        lk_parallel(last - first, 16384, [&](size_t from, size_t to) {
          for (size_t i = from; i < to; ++i) {
            memcpy(&hs[i * 2], src + (first + i) * 34, 2);
            memcpy(&b[i * 32], src + (first + i) * 34 + 2, 32);
          }
        });
      },
      [&](const uint8_t* b, size_t first, size_t last, cudaStream_t st) {
        CK(cudaMemcpyAsync(*q + first * 32, b, (last - first) * 32, cudaMemcpyDefault, st));
        CK(cudaMemcpyAsync(*s + first, b + (last - first) * 32, (last - first) * 2, cudaMemcpyDefault, st));
      });
}

// Eight bytes at p as one word (little-endian, as the checkpoint's bytes lie), and back.
static inline uint64_t lk_word(const uint8_t* p) {
  uint64_t w;
  memcpy(&w, p, 8);
  return w;
}
static inline void lk_put_word(uint8_t* p, uint64_t w) {
  memcpy(p, &w, 8);
}
// A 32-group's codes (c[i]: elements 8i .. 8i + 7, a byte each, below 16) packed as a group's 16 bytes: byte j holds
// elements j and j + 16.
static inline void lk_pack_group(uint8_t* q, const uint64_t (&c)[4]) {
  lk_put_word(q, c[0] | c[2] << 4);
  lk_put_word(q + 8, c[1] | c[3] << 4);
}
// A group's fifth bits as formats.cuh's lk_q5_high reads them (element 16 h + 4i + e at bit 8e + 4h + i), from
// elements 8i' .. 8i' + 7's bits, the low bit of each byte of `w`: the first four land in bytes 0..3 at bit 2i', the
// last four at bit 2i' + 1 (OR the four i' together).
static inline uint32_t lk_q5_place(uint64_t w, int i) {
  return (uint32_t)((w & 0x01010101u) | (w >> 32 & 0x01010101u) << 1) << (2 * i);
}
// A byte's 8 bits as the low bits of 8 bytes, bit k's in byte k (each byte keeps its own bit of a copy, then a carry
// into bit 7 says whether it was set).
static inline uint64_t lk_spread_bits(uint32_t b) {
  return (((b * 0x0101010101010101ull) & 0x8040201008040201ull) + 0x7f7f7f7f7f7f7f7full) >> 7 & 0x0101010101010101ull;
}

// A block-format matrix's `n` elements (ggml type t) out of the checkpoint's blocks into its planes (shapes.cuh's
// lk_plane_bytes; formats.cuh's lk_blk reads them): the same bits, each 32-group's 4-bit codes as 16 bytes whose byte j
// holds elements j and j + 16, its high bits and scales beside them. The K-quants' codes and bits move 8 at a time as
// 64-bit words (the byte-wise shifts and masks of each element, done for 8 bytes in one operation).
static void lk_repack(int t, const uint8_t* src, size_t n, uint8_t* q, uint8_t* h, uint8_t* s, uint8_t* d) {
  const size_t be = (size_t)lk_block_elems(t), bb = (size_t)lk_block_bytes(t);
  constexpr uint64_t kNibbles = 0x0f0f0f0f0f0f0f0full, kPairs = 0x0303030303030303ull, kBits = 0x0101010101010101ull;
  lk_parallel(n / be, 4096, [&](size_t first, size_t last) {
    for (size_t b = first; b < last; ++b) {
      const uint8_t* x = src + b * bb;
      if (be == 32) {
        // Legacy blocks: the scale bytes, the fifth bits (Q5, reordered: lk_q5_place), then codes already laid out as a
        // group's.
        const int sb = t == LK_Q4_0 || t == LK_Q5_0 || t == LK_IQ4_NL ? 2 : t == LK_MXFP4 ? 1 : 4;
        const int hb = t == LK_Q5_0 || t == LK_Q5_1 ? 4 : 0;
        memcpy(s + b * sb, x, sb);
        if (hb) {  // (bit j of the checkpoint's word: element j's)
          uint32_t qh, bits = 0;
          memcpy(&qh, x + sb, 4);
          for (int i = 0; i < 4; ++i) bits |= lk_q5_place(lk_spread_bits(qh >> (8 * i) & 0xffu), i);
          memcpy(h + b * 4, &bits, 4);
        }
        memcpy(q + b * 16, x + sb + hb, 16);
        continue;
      }
      if (t == LK_IQ4_XS) {  // d, the scales (8 bytes), then each group's 16 bytes of codes laid out as a group's
        memcpy(s + b * 8, x, 8);
        memcpy(q + b * 128, x + 8, 128);
        continue;
      }
      for (int gi = 0; gi < 8; ++gi) {
        const size_t g = b * 8 + gi;
        uint64_t c[4];  // the group's codes, 8 elements a word
        if (t == LK_Q2_K || t == LK_Q3_K) {
          // Each 128 elements' 32 bytes of 2-bit codes read four times, two bits further each time (group gi: bits
          // 2 (gi % 4)); Q3_K's third bit in its 32 bytes of high bits (bit gi of byte l: element l of group gi).
          const uint8_t* qs = x + (t == LK_Q2_K ? 16 : 32) + 32 * (gi / 4);
          const int shift = 2 * (gi % 4);
          for (int i = 0; i < 4; ++i) {
            c[i] = lk_word(qs + 8 * i) >> shift & kPairs;
            if (t == LK_Q3_K) c[i] |= (lk_word(x + 8 * i) >> gi & kBits) << 2;
          }
        } else if (t == LK_Q4_K || t == LK_Q5_K) {
          // d, dmin and the scales; then (Q5_K) 32 bytes of fifth bits (bit gi of byte l: element l of group gi); then
          // the codes, a 64-element chunk's 32 bytes low nibbles first.
          const uint8_t* qs = x + (t == LK_Q4_K ? 16 : 48) + 32 * (gi / 2);
          const int shift = 4 * (gi % 2);
          for (int i = 0; i < 4; ++i) c[i] = lk_word(qs + 8 * i) >> shift & kNibbles;
          if (t == LK_Q5_K) {
            uint32_t bits = 0;
            for (int i = 0; i < 4; ++i) bits |= lk_q5_place(lk_word(x + 16 + 8 * i) >> gi & kBits, i);
            memcpy(h + g * 4, &bits, 4);
          }
        } else {  // Q6_K: 128 bytes of low nibbles, 64 of 2-bit high parts, 16 int8 scales, d
          const int half = gi / 4, quarter = gi % 4;
          const uint8_t* ql = x + 64 * half + (quarter % 2 ? 32 : 0);
          const uint8_t* qh = x + 128 + 32 * half;
          const int shift = quarter >= 2 ? 4 : 0;
          for (int i = 0; i < 4; ++i) c[i] = lk_word(ql + 8 * i) >> shift & kNibbles;
          // The high parts as formats.cuh's lk_q6k_high reads them: element 4i + e of a half (a 32-bit word) at bits
          // 8e + 2i. Word i' of qh holds elements 8i' .. 8i' + 7 (a byte each): the first four go to bytes 0..3 at bits
          // 4 (i' % 2), the last four at 4 (i' % 2) + 2, in the word of half i' / 2.
          uint32_t bits[2] = {0, 0};
          for (int i = 0; i < 4; ++i) {
            const uint64_t w = lk_word(qh + 8 * i) >> (2 * quarter) & kPairs;
            bits[i / 2] |= (uint32_t)((w & 0x03030303u) | (w >> 32 & 0x03030303u) << 2) << (4 * (i % 2));
          }
          memcpy(h + g * 8, bits, 8);
        }
        lk_pack_group(q + g * 16, c);
      }
      if (t == LK_Q6_K) {
        memcpy(s + b * 16, x + 192, 16);
        memcpy(d + b * 2, x + 208, 2);
      } else if (t == LK_Q2_K) {  // 16 bytes of (scale, min) nibbles; d and dmin
        memcpy(s + b * 16, x, 16);
        memcpy(d + b * 4, x + 80, 4);
      } else if (t == LK_Q3_K) {  // 12 bytes of packed 6-bit scales (then 4 of padding); d
        memcpy(s + b * 16, x + 96, 12);
        memset(s + b * 16 + 12, 0, 4);
        memcpy(d + b * 2, x + 108, 2);
      } else {  // Q4_K, Q5_K: d and dmin; then the scales and mins as lk_scale_min_k4 reads them (formats.cuh)
        memcpy(s + b * 16, x, 4);
        const uint8_t* p = x + 4;  // ggml's 12 bytes of 6-bit scales and mins (get_scale_min_k4)
        uint32_t high = 0;
        for (int j = 0; j < 8; ++j) {
          const int sc = j < 4 ? p[j] & 63 : (p[j + 4] & 0xf) | (p[j - 4] >> 6) << 4;
          const int mn = j < 4 ? p[j + 4] & 63 : (p[j + 4] >> 4) | (p[j] >> 6) << 4;
          s[b * 16 + 4 + j] = (uint8_t)(sc | (mn & 3) << 6);
          high |= (uint32_t)(mn >> 2) << (4 * j);
        }
        memcpy(s + b * 16 + 12, &high, 4);
      }
    }
  });
}

std::vector<lk_plane> lk_planes(int t, const uint8_t* src, size_t n) {
  std::vector<lk_plane> p(4);
  size_t total = 0;
  for (int i = 0; i < 4; ++i) total += lk_round(p[i].n = lk_plane_bytes(t, i, n));
  uint8_t* at = lk_stage(total);  // (lk_repack writes every byte)
  for (int i = 0; i < 4; ++i)
    if (p[i].n) p[i].bytes = at, at += lk_round(p[i].n);
  lk_repack(t, src, n, p[0].data(), p[1].data(), p[2].data(), p[3].data());
  return p;
}

void lk_upload_planes(int t, const uint8_t* src, size_t n, bool host, uint8_t* dev[4]) {
  for (int i = 0; i < 4; ++i) dev[i] = lk_plane_bytes(t, i, n) ? lk_carve<uint8_t>(lk_plane_bytes(t, i, n), host) : nullptr;
  const size_t be = (size_t)lk_block_elems(t), bb = (size_t)lk_block_bytes(t);
  size_t unit = 0;  // a block's bytes over the planes (each plane's bytes are its elements' count times a constant)
  for (int i = 0; i < 4; ++i) unit += lk_plane_bytes(t, i, be);
  // A slice of blocks: its part of each plane, one after the other, repacked as a matrix of its own.
  lk_pipeline(
      n / be, unit,
      [&](uint8_t* b, size_t first, size_t last) {
        uint8_t* at[4];
        for (int i = 0; i < 4; ++i) at[i] = b, b += lk_plane_bytes(t, i, (last - first) * be);
        lk_repack(t, src + first * bb, (last - first) * be, at[0], at[1], at[2], at[3]);
      },
      [&](const uint8_t* b, size_t first, size_t last, cudaStream_t st) {
        for (int i = 0; i < 4; ++i) {
          const size_t bytes = lk_plane_bytes(t, i, (last - first) * be);
          if (bytes) CK(cudaMemcpyAsync(dev[i] + lk_plane_bytes(t, i, first * be), b, bytes, cudaMemcpyDefault, st));
          b += bytes;
        }
      });
}

void* lk_upload_bytes(const void* src, size_t bytes, bool host) {
  uint8_t* d = lk_carve<uint8_t>(bytes, host);
  if (bytes < (1u << 20) || lk_pipe_closed) {  // (a vector, a constant: no slices to overlap)
    CK(cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice));
    return d;
  }
  const uint8_t* from = (const uint8_t*)src;
  lk_pipeline(
      bytes, 1,
      [&](uint8_t* b, size_t first, size_t last) {
        lk_parallel(last - first, 1u << 20, [&](size_t a, size_t z) { memcpy(b + a, from + first + a, z - a); });
      },
      [&](const uint8_t* b, size_t first, size_t last, cudaStream_t st) {
        CK(cudaMemcpyAsync(d + first, b, last - first, cudaMemcpyDefault, st));
      });
  return d;
}

void lk_planes_done() {
  if (lk_pipe) {
    CK(cudaStreamSynchronize(lk_pipe->st));
    for (int i = 0; i < 2; ++i) {
      CK(cudaFreeHost(lk_pipe->buf[i]));
      CK(cudaEventDestroy(lk_pipe->copied[i]));
    }
    CK(cudaStreamDestroy(lk_pipe->st));
    delete lk_pipe;
    lk_pipe = nullptr;
  }
  lk_pipe_closed = true;
  lk_staging.reset();
  lk_staging_bytes = 0;
}
