// The lane's host side (after host.cuh): the checkpoint mapped and checked, the sidecar read, the pools the standing
// arrays are carved from, where the matrices live, their uploads, and the launch under programmatic dependent launch.

// Maps the checkpoint and checks it is the one the program was compiled against (size, digest of its header).
static const uint8_t* lk_open_checkpoint(const char* path, uint64_t size, uint64_t data_start, uint64_t digest) {
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

// Reads the sidecar and checks it is this program's own (size and digest).
static std::vector<uint8_t> lk_read_sidecar(const char* path, uint64_t bytes, uint64_t digest) {
  std::vector<uint8_t> side(bytes);
  FILE* f = fopen(path, "rb");
  bool ok = f && fread(side.data(), 1, bytes, f) == bytes && fgetc(f) == EOF && lk_xxh64(side.data(), bytes) == digest;
  if (f) fclose(f);
  if (!ok) { fprintf(stderr, "%s is not this program's sidecar\n", path); exit(LK_EXIT_WRONG_CHECKPOINT); }
  return side;
}

// The device pool every standing array is carved from, and the mapped host pool of the matrices moved off the device.
static unsigned char *lk_pool = nullptr, *lk_hpool = nullptr;
static size_t lk_pool_bytes = 0, lk_pool_at = 0, lk_hpool_bytes = 0, lk_hpool_at = 0;
static const size_t LK_ALIGN = 256;
static size_t lk_round(size_t n) { return (n + LK_ALIGN - 1) / LK_ALIGN * LK_ALIGN; }

template <class T>
static T* lk_carve(size_t count, bool host) {
  size_t n = lk_round(count * sizeof(T));
  unsigned char*& pool = host ? lk_hpool : lk_pool;
  size_t& at = host ? lk_hpool_at : lk_pool_at;
  size_t bytes = host ? lk_hpool_bytes : lk_pool_bytes;
  if (at + n > bytes) { fprintf(stderr, "the program allocates past its %zu %s bytes\n", bytes, host ? "host" : "device"); exit(LK_EXIT_ACCOUNTING); }
  T* p = (T*)(pool + at);
  at += n;
  return p;
}

// Decides where the matrices live: the device's free memory (or --device-bytes) less the fixed arrays, the matrices
// moved to mapped host memory in the compiled order until the rest fits. Returns how many moved.
static int lk_place(size_t device_bytes, size_t fixed, const size_t* order, int n) {
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

// A Q8_0 matrix's rows out of the checkpoint (34-byte blocks: an f16 scale, 32 int8) as int8 rows and scales.
inline lk_q8 lk_upload_q8(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host) {
  const size_t nb = cols / 32;
  std::vector<signed char> q(rows * cols);
  std::vector<__half> s(rows * nb);
  const uint8_t* src = file + offset;
  for (size_t b = 0; b < rows * nb; ++b) {
    memcpy(&s[b], src + b * 34, 2);
    memcpy(&q[b * 32], src + b * 34 + 2, 32);
  }
  signed char* dq = lk_carve<signed char>(rows * cols, host);
  __half* ds = lk_carve<__half>(rows * nb, host);
  CK(cudaMemcpy(dq, q.data(), q.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(ds, s.data(), s.size() * 2, cudaMemcpyHostToDevice));
  return lk_q8{dq, ds};
}

#if LK_WITH_BLOCKS
// A block-format matrix's `n` elements (ggml type t) out of the checkpoint's blocks into its planes (shapes.cuh's
// lk_plane_bytes; formats.cuh's lk_blk reads them): the same bits, each 32-group's 4-bit codes as 16 bytes whose byte j
// holds elements j and j + 16, its high bits and scales beside them.
inline void lk_repack(int t, const uint8_t* src, size_t n, uint8_t* q, uint8_t* h, uint8_t* s, uint8_t* d) {
  const size_t be = (size_t)lk_block_elems(t), bb = (size_t)lk_block_bytes(t);
  // Group g's codes from a function of its element l (0..31).
  auto pack = [&](size_t g, auto code) {
    for (int j = 0; j < 16; ++j) q[g * 16 + j] = (uint8_t)(code(j) | (code(j + 16) << 4));
  };
  for (size_t b = 0; b < n / be; ++b) {
    const uint8_t* x = src + b * bb;
    if (be == 32) {
      // Legacy blocks: the scale bytes, the fifth bits (Q5), then codes already laid out as a group's.
      const int sb = t == LK_Q4_0 || t == LK_Q5_0 || t == LK_IQ4_NL ? 2 : t == LK_MXFP4 ? 1 : 4;
      const int hb = t == LK_Q5_0 || t == LK_Q5_1 ? 4 : 0;
      memcpy(s + b * sb, x, sb);
      if (hb) memcpy(h + b * 4, x + sb, 4);
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
      if (t == LK_Q2_K || t == LK_Q3_K) {
        // Each 128 elements' 32 bytes of 2-bit codes read four times, two bits further each time (group gi: bits
        // 2 (gi % 4)); Q3_K's third bit in its 32 bytes of high bits (bit gi of byte l: element l of group gi).
        const uint8_t* qs = x + (t == LK_Q2_K ? 16 : 32) + 32 * (gi / 4);
        const int shift = 2 * (gi % 4);
        pack(g, [&](int l) { return ((qs[l] >> shift) & 3) | (t == LK_Q3_K ? ((x[l] >> gi) & 1) << 2 : 0); });
      } else if (t == LK_Q4_K || t == LK_Q5_K) {
        // d, dmin and the scales; then (Q5_K) 32 bytes of fifth bits (bit gi of byte l: element l of group gi); then
        // the codes, a 64-element chunk's 32 bytes low nibbles first.
        const uint8_t* qs = x + (t == LK_Q4_K ? 16 : 48) + 32 * (gi / 2);
        const int shift = 4 * (gi % 2);
        pack(g, [&](int l) { return (qs[l] >> shift) & 0xf; });
        if (t == LK_Q5_K) {
          uint32_t bits = 0;
          for (int l = 0; l < 32; ++l) bits |= (uint32_t)((x[16 + l] >> gi) & 1) << l;
          memcpy(h + g * 4, &bits, 4);
        }
      } else {  // Q6_K: 128 bytes of low nibbles, 64 of 2-bit high parts, 16 int8 scales, d
        const int half = gi / 4, quarter = gi % 4;
        const uint8_t* ql = x + 64 * half + (quarter % 2 ? 32 : 0);
        const uint8_t* qh = x + 128 + 32 * half;
        const int shift = quarter >= 2 ? 4 : 0;
        pack(g, [&](int l) { return (ql[l] >> shift) & 0xf; });
        uint64_t bits = 0;
        for (int l = 0; l < 32; ++l) bits |= (uint64_t)((qh[l] >> (2 * quarter)) & 3) << (2 * l);
        memcpy(h + g * 8, &bits, 8);
      }
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
    } else {
      memcpy(s + b * 16, x, 16);
    }
  }
}

// The planes of a block-format matrix repacked on the host (lk_repack), in that order; an empty vector for a plane the
// format lacks.
inline std::vector<std::vector<uint8_t>> lk_planes(int t, const uint8_t* src, size_t n) {
  std::vector<std::vector<uint8_t>> p(4);
  for (int i = 0; i < 4; ++i) p[i].resize(lk_plane_bytes(t, i, n));
  lk_repack(t, src, n, p[0].data(), p[1].data(), p[2].data(), p[3].data());
  return p;
}

template <int T>
static lk_blk<T> lk_upload_blocks(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host) {
  const std::vector<std::vector<uint8_t>> p = lk_planes(T, file + offset, rows * cols);
  uint8_t* dev[4] = {};
  for (int i = 0; i < 4; ++i) {
    if (p[i].empty()) continue;
    dev[i] = lk_carve<uint8_t>(p[i].size(), host);
    CK(cudaMemcpy(dev[i], p[i].data(), p[i].size(), cudaMemcpyHostToDevice));
  }
  return lk_blk<T>{dev[0], dev[1], dev[2], (const __half*)dev[3]};
}
#endif  // LK_WITH_BLOCKS

// A matrix of plain elements straight from the checkpoint.
template <class W>
static lk_plain<W> lk_upload_plain(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host) {
  W* d = lk_carve<W>(rows * cols, host);
  CK(cudaMemcpy(d, file + offset, rows * cols * sizeof(W), cudaMemcpyHostToDevice));
  return lk_plain<W>{d};
}

// An f32 vector (a norm's weights, a bias) straight from the checkpoint.
static float* lk_upload_f32(const uint8_t* file, uint64_t offset, size_t n) {
  float* d = lk_carve<float>(n, false);
  CK(cudaMemcpy(d, file + offset, n * 4, cudaMemcpyHostToDevice));
  return d;
}

// A computed constant of the sidecar.
static lk_act* lk_upload_side(const std::vector<uint8_t>& side, size_t offset, size_t n) {
  lk_act* d = lk_carve<lk_act>(n, false);
  CK(cudaMemcpy(d, side.data() + offset, n * sizeof(lk_act), cudaMemcpyHostToDevice));
  return d;
}

// Zeroed device memory for carried state (caches, position, counters).
template <class T>
static T* lk_zeroed(size_t n) {
  T* d = lk_carve<T>(n, false);
  CK(cudaMemset(d, 0, n * sizeof(T)));
  return d;
}

// A launch under programmatic dependent launch (the `pdl` knob): it may start while the launch before it drains, its
// blocks held at lk_pdl_entry until that one is done.
template <class... P, class... A>
static void lk_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t st, A&&... args) {
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c = {};
  c.gridDim = grid;
  c.blockDim = block;
  c.dynamicSmemBytes = smem;
  c.stream = st;
  c.attrs = at;
  c.numAttrs = 1;
  CK(cudaLaunchKernelEx(&c, kernel, std::forward<A>(args)...));
}
