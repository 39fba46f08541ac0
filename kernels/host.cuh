// The lane's host side: its command line, the checks of its checkpoint and sidecar, its memory pools, the uploads of
// the weights straight from the mapped checkpoint, and the drive loop that prefills, generates, measures and prints
// the output contract (version 2). The emitted part of a program declares its constants and forms and calls into
// this; so does the resident host (resident.cuh), which runs many lanes' images over one upload of the weights.

#define CK(x)                                                                                          \
  do {                                                                                                 \
    cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) {                                                                           \
      fprintf(stderr, "cuda error %s:%d: %s (%s)\n", __FILE__, __LINE__, cudaGetErrorString(e_), #x); \
      exit(1);                                                                                         \
    }                                                                                                  \
  } while (0)
#define CKL() CK(cudaGetLastError())

#include <chrono>
#include <cmath>

// The command line, parsed: the flags that may appear anywhere, then the prompts.
struct lk_args {
  bool prof = false, stagger = false;
  unsigned long long seed = 0;
  size_t device_bytes = SIZE_MAX;
  const char* checkpoint = nullptr;
  const char* sidecar = nullptr;
  FILE* logits = nullptr;
  std::vector<std::pair<int, std::vector<int>>> jobs;  // (n_gen, prompt)
  int workload_prompt = 0, workload_gen = 0;           // --workload P,G: a prompt of P tokens, G generated
  int repeat = 1, warmup = 0;                          // the workload's timed and untimed runs
  std::vector<unsigned long long> stagger_check;       // seeds the prompts are run again under, compared bit for bit
  int cutoff_on = -1;                                  // --cutoff: 0 workload, 1 decode, 2 prefill (-1: none)
  double cutoff_ms = 0;
};

static int lk_usage(const char* prog) {
  fprintf(stderr,
          "usage: %s <checkpoint.gguf> <sidecar> <n_gen> [--logits <file>] <token> ...\n"
          "       %s <checkpoint.gguf> <sidecar> --prompts <file> [--logits <file>]  (a line a prompt: <n_gen> <token> ...)\n"
          "       --profile anywhere times every launch of every step\n"
          "       --stagger <seed> anywhere holds each launch back by a stall drawn from the seed\n"
          "       --device-bytes <n> anywhere keeps the program to n device bytes, the matrices past them in host memory\n"
          "       --workload <P>,<G> times a prompt of P tokens generating G after the prompts (--repeat <n> times, after\n"
          "         --warmup <n> untimed runs; --profile then times every launch of one more run of it)\n"
          "       --stagger-check <seed>[,<seed>...] runs the prompts again under each seed: their logits must not change\n"
          "       --cutoff <workload|decode|prefill>=<ms> stops after the workload's first run (a warm-up's estimate) when\n"
          "         that figure is past ms: a CUTOFF line instead of the timed runs and the profile\n",
          prog, prog);
  return 2;
}

// Reads a whole number in [lo, hi] or says what is wrong.
static bool lk_number(const char* s, long long lo, long long hi, long long* out, const char* what) {
  char* e = nullptr;
  errno = 0;
  long long v = strtoll(s, &e, 10);
  if (!*s || *e || errno || v < lo || v > hi) {
    fprintf(stderr, "%s must be a whole number in [%lld, %lld], not \"%s\"\n", what, lo, hi, s);
    return false;
  }
  *out = v;
  return true;
}

// Parses the command line into `a`; returns -1 when the program should go on, else its exit code.
static int lk_parse_args(int argc, char** argv, lk_args& a, int vocab, int ctx) {
  std::vector<char*> pos;
  const char* logits_path = nullptr;
  const char* prompts_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    long long v = 0;
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", flag); return nullptr; }
      return argv[++i];
    };
    if (s == "--profile") a.prof = true;
    else if (s == "--stagger") {
      const char* x = value("--stagger");
      if (!x || !lk_number(x, 0, LLONG_MAX, &v, "--stagger's seed")) return 2;
      a.stagger = true; a.seed = (unsigned long long)v;
    } else if (s == "--device-bytes") {
      const char* x = value("--device-bytes");
      if (!x || !lk_number(x, 0, LLONG_MAX, &v, "--device-bytes")) return 2;
      a.device_bytes = (size_t)v;
    } else if (s == "--workload") {
      const char* x = value("--workload");
      if (!x) return 2;
      const char* comma = strchr(x, ',');
      if (!comma) { fprintf(stderr, "--workload takes <prompt>,<generated>, not \"%s\"\n", x); return 2; }
      const std::string p(x, (size_t)(comma - x));
      long long g = 0;
      if (!lk_number(p.c_str(), 1, ctx, &v, "--workload's prompt") ||
          !lk_number(comma + 1, 1, ctx, &g, "--workload's generated tokens"))
        return 2;
      if (v + g > ctx) {
        fprintf(stderr, "--workload %lld,%lld needs %lld positions; the lane holds %d\n", v, g, v + g, ctx);
        return 2;
      }
      a.workload_prompt = (int)v; a.workload_gen = (int)g;
    } else if (s == "--repeat" || s == "--warmup") {
      const char* x = value(s.c_str());
      if (!x || !lk_number(x, s == "--repeat" ? 1 : 0, 1000000, &v, s.c_str())) return 2;
      (s == "--repeat" ? a.repeat : a.warmup) = (int)v;
    } else if (s == "--stagger-check") {
      const char* x = value("--stagger-check");
      if (!x) return 2;
      for (const char* at = x;;) {
        const char* comma = strchr(at, ',');
        std::string one(at, comma ? (size_t)(comma - at) : strlen(at));
        if (!lk_number(one.c_str(), 0, LLONG_MAX, &v, "--stagger-check's seed")) return 2;
        a.stagger_check.push_back((unsigned long long)v);
        if (!comma) break;
        at = comma + 1;
      }
    } else if (s == "--cutoff") {
      const char* x = value("--cutoff");
      if (!x) return 2;
      const char* eq = strchr(x, '=');
      const std::string on(x, eq ? (size_t)(eq - x) : strlen(x));
      char* end = nullptr;
      const double ms = eq ? strtod(eq + 1, &end) : 0;
      a.cutoff_on = on == "workload" ? 0 : on == "decode" ? 1 : on == "prefill" ? 2 : -1;
      if (a.cutoff_on < 0 || !eq || !eq[1] || *end || !(ms > 0) || !std::isfinite(ms)) {
        fprintf(stderr, "--cutoff takes <workload|decode|prefill>=<ms> (ms > 0), not \"%s\"\n", x);
        return 2;
      }
      a.cutoff_ms = ms;
    } else if (s == "--logits") {
      if (!(logits_path = value("--logits"))) return 2;
    } else if (s == "--prompts") {
      if (!(prompts_path = value("--prompts"))) return 2;
    } else if (s.size() > 2 && s[0] == '-' && s[1] == '-') {
      fprintf(stderr, "unknown flag %s\n", s.c_str());
      return lk_usage(argv[0]);
    } else pos.push_back(argv[i]);
  }
  if (pos.size() < 2 || (!prompts_path && pos.size() < 4) || (prompts_path && pos.size() != 2)) return lk_usage(argv[0]);
  a.checkpoint = pos[0];
  a.sidecar = pos[1];
  auto add_job = [&](const std::vector<long long>& v, const char* where) {
    long long n_gen = v[0];
    std::vector<int> prompt;
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] < 0 || v[i] >= vocab) { fprintf(stderr, "%s: token %lld is outside the vocabulary [0, %d)\n", where, v[i], vocab); return false; }
      prompt.push_back((int)v[i]);
    }
    if (prompt.empty() || n_gen < 1 || (long long)prompt.size() + n_gen > ctx) {
      fprintf(stderr, "%s: a prompt of %zu tokens generating %lld needs %lld positions; the lane holds %d and takes at least one of each\n",
              where, prompt.size(), n_gen, (long long)prompt.size() + n_gen, ctx);
      return false;
    }
    a.jobs.push_back({(int)n_gen, prompt});
    return true;
  };
  if (prompts_path) {
    FILE* pf = fopen(prompts_path, "r");
    if (!pf) { fprintf(stderr, "cannot read the prompts %s: %s\n", prompts_path, strerror(errno)); return 2; }
    std::vector<char> line(1 << 20);
    int at = 0;
    while (fgets(line.data(), (int)line.size(), pf)) {
      ++at;
      std::vector<long long> v;
      char* p = line.data();
      char* e = nullptr;
      for (long long x = strtoll(p, &e, 10); e != p; x = strtoll(p, &e, 10)) { v.push_back(x); p = e; }
      while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') ++p;
      if (*p) { fprintf(stderr, "%s:%d: not a list of numbers\n", prompts_path, at); fclose(pf); return 2; }
      if (v.empty()) continue;
      std::string where = std::string(prompts_path) + ":" + std::to_string(at);
      if (v.size() < 2 || !add_job(v, where.c_str())) { if (v.size() < 2) fprintf(stderr, "%s: a prompt needs n_gen and a token\n", where.c_str()); fclose(pf); return 2; }
    }
    fclose(pf);
    if (a.jobs.empty()) { fprintf(stderr, "%s holds no prompt\n", prompts_path); return 2; }
  } else {
    std::vector<long long> v;
    for (size_t i = 2; i < pos.size(); ++i) {
      long long x = 0;
      if (!lk_number(pos[i], i == 2 ? 1 : 0, i == 2 ? ctx : vocab - 1, &x, i == 2 ? "n_gen" : "a token")) return 2;
      v.push_back(x);
    }
    if (!add_job(v, "the prompt")) return 2;
  }
  if (logits_path && !(a.logits = fopen(logits_path, "wb"))) {
    fprintf(stderr, "cannot write the logits to %s: %s\n", logits_path, strerror(errno));
    return 2;
  }
  return -1;
}

// Maps the checkpoint and checks it is the one the program was compiled against (size, digest of its header).
static const uint8_t* lk_open_checkpoint(const char* path, uint64_t size, uint64_t data_start, uint64_t digest) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) { fprintf(stderr, "cannot open the checkpoint %s: %s\n", path, strerror(errno)); exit(3); }
  struct stat sb;
  fstat(fd, &sb);
  if ((uint64_t)sb.st_size != size) { fprintf(stderr, "%s is not the checkpoint this program was compiled against (size %lld, not %llu)\n", path, (long long)sb.st_size, (unsigned long long)size); exit(3); }
  void* m = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) { fprintf(stderr, "cannot map %s: %s\n", path, strerror(errno)); exit(3); }
  if (lk_xxh64((const uint8_t*)m, data_start) != digest) { fprintf(stderr, "%s is not the checkpoint this program was compiled against (its digest differs)\n", path); exit(3); }
  return (const uint8_t*)m;
}

// Reads the sidecar and checks it is this program's own (size and digest).
static std::vector<uint8_t> lk_read_sidecar(const char* path, uint64_t bytes, uint64_t digest) {
  std::vector<uint8_t> side(bytes);
  FILE* f = fopen(path, "rb");
  bool ok = f && fread(side.data(), 1, bytes, f) == bytes && fgetc(f) == EOF && lk_xxh64(side.data(), bytes) == digest;
  if (f) fclose(f);
  if (!ok) { fprintf(stderr, "%s is not this program's sidecar\n", path); exit(3); }
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
  if (at + n > bytes) { fprintf(stderr, "the program allocates past its %zu %s bytes\n", bytes, host ? "host" : "device"); exit(5); }
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
    exit(4);
  }
  size_t dev = fixed, host = 0;
  for (int i = 0; i < n; ++i) dev += lk_round(order[i]);
  int moved = 0;
  while (dev > budget && moved < n) { dev -= lk_round(order[moved]); host += lk_round(order[moved]); ++moved; }
  lk_pool_bytes = dev;
  if (cudaMalloc(&lk_pool, dev) != cudaSuccess) { fprintf(stderr, "cannot allocate %zu device bytes\n", dev); exit(4); }
  if (host) {
    void* h = nullptr;
    if (cudaHostAlloc(&h, host, cudaHostAllocMapped) != cudaSuccess) { fprintf(stderr, "cannot allocate %zu mapped host bytes\n", host); exit(4); }
    CK(cudaHostGetDevicePointer((void**)&lk_hpool, h, 0));
    lk_hpool_bytes = host;
  }
  return moved;
}

// A Q8_0 matrix's rows out of the checkpoint (34-byte blocks: an f16 scale, 32 int8) as int8 rows and scales.
static lk_q8 lk_upload_q8(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host) {
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

// The stagger's switch and seed, from the command line.
static bool lk_stagger = false;
static unsigned long long lk_seed = 0;

// Before launch `i` of form `form`: its --profile event (when `ev`: steps run uncaptured, timed by events), and
// under --stagger its stall. Any error of the launches before it surfaces here.
static __attribute__((noinline)) void lk_before(cudaStream_t st, const cudaEvent_t* ev, int form, int i) {
  CKL();
  if (ev) CK(cudaEventRecord(ev[i], st));
  if (lk_stagger) lk_stall<<<1, 1, 0, st>>>(lk_stall_ns(lk_seed, form, i));
}

// Side streams (side_streams): a group of independent launches forks from the step's stream before its first launch
// (the side streams wait for what the step's stream holds so far) and joins it after its last. In a capture the fork
// and join are the graph's edges.
static cudaStream_t lk_side[2];
static cudaEvent_t lk_fork_ev, lk_join_ev[2];
inline void lk_side_init() {
  for (int i = 0; i < 2; ++i) {
    CK(cudaStreamCreateWithFlags(&lk_side[i], cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&lk_join_ev[i], cudaEventDisableTiming));
  }
  CK(cudaEventCreateWithFlags(&lk_fork_ev, cudaEventDisableTiming));
}
inline void lk_fork(cudaStream_t st, int sides) {
  CK(cudaEventRecord(lk_fork_ev, st));
  for (int i = 0; i < sides; ++i) CK(cudaStreamWaitEvent(lk_side[i], lk_fork_ev, 0));
}
inline void lk_join(cudaStream_t st, int sides) {
  for (int i = 0; i < sides; ++i) {
    CK(cudaEventRecord(lk_join_ev[i], lk_side[i]));
    CK(cudaStreamWaitEvent(st, lk_join_ev[i], 0));
  }
}

// After a step's `n` launches: its last launch checked, and its closing --profile event.
static __attribute__((noinline)) void lk_after(cudaStream_t st, const cudaEvent_t* ev, int n) {
  CKL();
  if (ev) CK(cudaEventRecord(ev[n], st));
}

// --profile's clock, where the CUDA toolkit's CUPTI library can be loaded: the hardware's start and end stamps of
// every kernel (activity records), so a step runs exactly as it does unprofiled, its graph untouched. In a graph a
// launch's time is from the end of the launch before it to its own end (the gap it waited for included), so the
// launches' times add up to the step's. Without a graph the gaps are the host's, and CUPTI's hooks slow every
// host-side launch once it is attached: so the first half of the decode steps (and the chunks before them) run plain,
// timed by events, before CUPTI attaches; after it, each launch's time is its kernels' own (the part of their span
// after the launch before ended), and the gaps are one line: the plain steps' time less the launches'. Loaded at run
// time, so that only --profile needs the library.
struct lk_span {
  unsigned long long start, end;
};
static std::vector<lk_span> lk_spans;
#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#include <dlfcn.h>
static CUptiResult (*lk_cupti_next)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
static CUptiResult (*lk_cupti_flush)(uint32_t) = nullptr;
static CUptiResult (*lk_cupti_enable)(CUpti_ActivityKind) = nullptr;
static CUptiResult (*lk_cupti_disable)(CUpti_ActivityKind) = nullptr;

static void CUPTIAPI lk_cupti_buffer(uint8_t** buf, size_t* size, size_t* max_records) {
  *size = 8u << 20;
  *buf = (uint8_t*)aligned_alloc(64, *size);
  *max_records = 0;
}

static void CUPTIAPI lk_cupti_done(CUcontext, uint32_t, uint8_t* buf, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  while (lk_cupti_next(buf, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && r->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    const auto* k = (const CUpti_ActivityKernel10*)r;
    if (k->name && strstr(k->name, "lk_stall")) continue;  // the stagger's stalls are not the lane's launches
    lk_spans.push_back({k->start, k->end});
  }
  free(buf);
}

static CUptiResult (*lk_cupti_register)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;

// Loads CUPTI (without attaching it); false where it cannot.
static bool lk_cupti_load() {
  const char* names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12", "/usr/local/cuda/lib64/libcupti.so",
                         "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"};
  void* h = nullptr;
  for (const char* n : names)
    if ((h = dlopen(n, RTLD_NOW))) break;
  if (!h) return false;
  lk_cupti_register = (CUptiResult(*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))dlsym(
      h, "cuptiActivityRegisterCallbacks");
  lk_cupti_enable = (CUptiResult(*)(CUpti_ActivityKind))dlsym(h, "cuptiActivityEnable");
  lk_cupti_next = (CUptiResult(*)(uint8_t*, size_t, CUpti_Activity**))dlsym(h, "cuptiActivityGetNextRecord");
  lk_cupti_flush = (CUptiResult(*)(uint32_t))dlsym(h, "cuptiActivityFlushAll");
  lk_cupti_disable = (CUptiResult(*)(CUpti_ActivityKind))dlsym(h, "cuptiActivityDisable");
  return lk_cupti_register && lk_cupti_enable && lk_cupti_next && lk_cupti_flush && lk_cupti_disable;
}

// Attaches the loaded CUPTI: its kernel records from here on (its buffers registered once a process).
static void lk_cupti_attach() {
  static bool registered = false;
  if (!registered && lk_cupti_register(lk_cupti_buffer, lk_cupti_done) == CUPTI_SUCCESS) registered = true;
  if (!registered || lk_cupti_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    fprintf(stderr, "--profile: CUPTI could not start its kernel records\n");
    exit(1);
  }
}

// The kernels' spans recorded since the last call, in the order they ran.
static std::vector<lk_span> lk_cupti_take() {
  CK(cudaDeviceSynchronize());
  lk_cupti_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::vector<lk_span> out;
  out.swap(lk_spans);
  std::sort(out.begin(), out.end(), [](const lk_span& x, const lk_span& y) { return x.start < y.start; });
  return out;
}

// Detaches CUPTI again: no kernel records from here on (a resident host goes on to time other lanes unprofiled).
static void lk_cupti_detach() {
  lk_cupti_take();
  lk_cupti_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  lk_cupti_take();
}
#else
static bool lk_cupti_load() { return false; }
static void lk_cupti_attach() {}
static void lk_cupti_detach() {}
static std::vector<lk_span> lk_cupti_take() { return {}; }
#endif

// One form of the lane: its rows, its step, its token input and its logits, and its launches' names for --profile.
struct lk_form {
  int rows;
  std::function<void(cudaStream_t, const cudaEvent_t*)> step;  // the events: one before each launch, or null
  int* tok;
  const void* logits;  // vocab lk_act values (the state's act_bytes each)
  std::vector<const char*> kinds, outputs;
  std::vector<int> kernels;         // the kernels each launch runs
  std::vector<cudaEvent_t> events;  // one before each launch and one after the last, under --profile without CUPTI
  cudaGraphExec_t exec = nullptr;
  std::vector<double> ms;  // summed time of each launch
  int runs = 0;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> plain;  // uncaptured under CUPTI: the steps run before it attached
};

// The carried state the drive loop resets and reads, and the size of the lane's activations.
struct lk_state {
  int *pos, *tok, *gen, *count, *prompt;
  int vocab, ctx;
  int act_bytes;
};

// One run of a prompt: the tokens it generated and its times.
struct lk_outcome {
  std::vector<int> tokens;
  float prefill_ms = 0, decode_ms = 0;
};

// A lane's forms on one stream, run and measured: each form's step captured as a graph (the `graphs` knob), the
// --profile accounting of a profiled run, and the runs of prompts.
struct lk_session {
  std::vector<lk_form>& forms;
  const lk_state& s;
  const bool graphs;
  cudaStream_t st = nullptr;
  // --profile over one run: the launches timed by CUPTI's kernel stamps (`stamped`) or by events between uncaptured
  // launches; uncaptured under CUPTI the first `plain_decode` decode steps run plain before CUPTI attaches.
  bool prof = false, stamped = false, captured = false, attached = false;
  int plain_decode = 0;
  cudaEvent_t e0, e1, e2;

  lk_session(std::vector<lk_form>& f, const lk_state& state, bool g) : forms(f), s(state), graphs(g) {
    CK(cudaStreamCreate(&st));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
  }
  ~lk_session() {
    for (auto& f : forms) {
      if (f.exec) cudaGraphExecDestroy(f.exec);
      f.exec = nullptr;
      for (auto& e : f.events) cudaEventDestroy(e);
      f.events.clear();
      for (auto& [a, b] : f.plain) cudaEventDestroy(a), cudaEventDestroy(b);
      f.plain.clear();
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaStreamDestroy(st);
  }

  lk_form& form(int rows) {
    for (auto& f : forms) if (f.rows == rows) return f;
    fprintf(stderr, "the lane has no form of %d rows\n", rows);
    exit(1);
  }

  // Captures (again) every form's step as a graph when `on`, under the stagger switch as it is now; else drops them.
  void capture(bool on) {
    for (auto& f : forms) {
      if (f.exec) CK(cudaGraphExecDestroy(f.exec));
      f.exec = nullptr;
      if (!on) continue;
      cudaGraph_t g;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
      f.step(st, nullptr);
      CK(cudaStreamEndCapture(st, &g));
      CK(cudaGraphInstantiate(&f.exec, g, 0));
      CK(cudaGraphDestroy(g));
    }
  }

  // Makes the next runs a profiled run (`on`) or plain ones, `decode_steps` the decode steps the profiled run takes.
  // Under --profile the kernels' own stamps time the launches (CUPTI), graphs and all; without CUPTI the steps run
  // uncaptured with an event before each launch, which pays launch gaps a graph does not. A graph lane loads CUPTI up
  // front; an uncaptured one only once its plain steps are done, so that they run as unprofiled steps do.
  void profile(bool on, int decode_steps) {
    if (attached) lk_cupti_detach();
    attached = false;
    prof = on;
    stamped = on && (!graphs || lk_cupti_load());
    const bool want = graphs && (!on || stamped);
    if (want != captured || !want) capture(want);
    captured = want;
    plain_decode = stamped && !captured ? (decode_steps + 1) / 2 : 0;
    if (!on) return;
    for (auto& f : forms) {
      f.ms.assign(f.kinds.size(), 0.0);
      f.runs = 0;
      for (auto& [a, b] : f.plain) cudaEventDestroy(a), cudaEventDestroy(b);
      f.plain.clear();
    }
    if (stamped && captured) {
      lk_cupti_attach();
      attached = true;
    }
    printf("PROFILE_TIMING: %s\n", stamped ? (captured ? "kernels-graph" : "kernels-stream") : "events");
    if (!stamped) use_events();
  }

  void use_events() {  // the profile by events: one before each launch and one after the last
    for (auto& f : forms) {
      if (!f.events.empty()) continue;
      f.events.resize(f.kinds.size() + 1);
      for (auto& e : f.events) CK(cudaEventCreate(&e));
    }
  }

  // Runs one step of form `f`, and under a profiled run adds its launches' times.
  void run(lk_form& f) {
    if (prof && stamped && !attached) {
      if (f.rows == 1 && (int)f.plain.size() >= plain_decode) {
        attached = true;
        if (lk_cupti_load()) {
          lk_cupti_attach();
        } else {
          fprintf(stderr, "--profile: no CUPTI library: the launches are timed by events\n");
          stamped = false;
          use_events();
        }
      } else {  // a plain step, timed by a pair of events (read at the end: the host runs ahead as unprofiled)
        f.plain.emplace_back();
        CK(cudaEventCreate(&f.plain.back().first));
        CK(cudaEventCreate(&f.plain.back().second));
        CK(cudaEventRecord(f.plain.back().first, st));
        f.step(st, nullptr);
        CK(cudaEventRecord(f.plain.back().second, st));
        return;
      }
    }
    if (f.exec) CK(cudaGraphLaunch(f.exec, st));
    else f.step(st, prof && !stamped ? f.events.data() : nullptr);
    if (!prof) return;
    CK(cudaStreamSynchronize(st));
    if (stamped) {
      const std::vector<lk_span> sp = lk_cupti_take();
      size_t want = 0;
      for (int c : f.kernels) want += (size_t)c;
      if (sp.size() != want) {
        fprintf(stderr, "--profile: %zu kernels recorded for a step of %zu\n", sp.size(), want);
        exit(1);
      }
      // A launch's time in a graph: from the end of the launch before it (its first kernel's start, for the first)
      // to the end of its last kernel. Without a graph: the parts of its kernels' spans after the kernel before ended.
      unsigned long long prev = sp.empty() ? 0 : sp[0].start;
      for (size_t k = 0, at = 0; k < f.ms.size(); ++k) {
        const size_t first = at;
        at += (size_t)f.kernels[k];
        if (captured) {  // (a launch that ran beside a later one and ended first: 0)
          const unsigned long long end = std::max(prev, sp[at - 1].end);
          f.ms[k] += 1e-6 * (double)(end - prev);
          prev = end;
          continue;
        }
        for (size_t j = first; j < at; ++j) {
          const unsigned long long from = std::max(sp[j].start, prev);
          if (sp[j].end > from) f.ms[k] += 1e-6 * (double)(sp[j].end - from);
          prev = std::max(prev, sp[j].end);
        }
      }
    } else {
      for (size_t k = 0; k < f.ms.size(); ++k) {
        float ms = 0.f;
        CK(cudaEventElapsedTime(&ms, f.events[k], f.events[k + 1]));
        f.ms[k] += ms;
      }
    }
    ++f.runs;
  }

  // Prefills `prompt` in the largest chunks that fit and generates `n_gen` tokens; appends every generated position's
  // logits to `logits` (as f32) when given.
  lk_outcome generate(const std::vector<int>& prompt, int n_gen, std::vector<float>* logits) {
    std::vector<unsigned char> raw;
    auto dump = [&](const lk_form& f) {
      if (!logits) return;
      raw.resize((size_t)s.vocab * s.act_bytes);
      CK(cudaMemcpyAsync(raw.data(), f.logits, raw.size(), cudaMemcpyDeviceToHost, st));
      CK(cudaStreamSynchronize(st));
      for (int i = 0; i < s.vocab; ++i)
        logits->push_back(s.act_bytes == 8 ? (float)((const double*)raw.data())[i] : ((const float*)raw.data())[i]);
    };
    CK(cudaMemsetAsync(s.pos, 0, 4, st));
    CK(cudaMemsetAsync(s.count, 0, 4, st));
    CK(cudaMemcpyAsync(s.prompt, prompt.data(), prompt.size() * 4, cudaMemcpyHostToDevice, st));
    CK(cudaEventRecord(e0, st));
    int steps = 0;
    const lk_form* last = nullptr;
    for (int at = 0; at < (int)prompt.size();) {
      int rows = 1;
      for (auto& f : forms) if (f.rows > rows && f.rows <= (int)prompt.size() - at) rows = f.rows;
      lk_form& f = form(rows);
      CK(cudaMemcpyAsync(f.tok, s.prompt + at, rows * 4, cudaMemcpyDeviceToDevice, st));
      run(f);
      last = &f;
      at += rows;
      ++steps;
    }
    CK(cudaEventRecord(e1, st));
    dump(*last);
    lk_form& decode = form(1);
    for (int g = 1; g < n_gen; ++g) {
      run(decode);
      dump(decode);
      ++steps;
    }
    CK(cudaEventRecord(e2, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    lk_outcome o;
    CK(cudaEventElapsedTime(&o.prefill_ms, e0, e1));
    CK(cudaEventElapsedTime(&o.decode_ms, e1, e2));
    std::vector<int> gen(steps);
    CK(cudaMemcpy(gen.data(), s.gen, steps * 4, cudaMemcpyDeviceToHost));
    o.tokens.assign(gen.begin() + (steps - n_gen), gen.end());
    return o;
  }

  // The profiled run's lines: each form's launches, and under CUPTI without a graph the host's gaps (its plain steps
  // less its launches' times); then how many times each form ran.
  void print_profile() {
    auto lines = [&](const lk_form& f, const char* tag, const char* rows) {
      double total = 0;
      for (size_t k = 0; k < f.ms.size(); ++k) {
        const double us = 1000.0 * f.ms[k] / f.runs;
        printf("%s: %s%s %s %.3f\n", tag, rows, f.kinds[k], f.outputs[k], us);
        total += us;
      }
      if (!f.plain.empty()) {
        double plain_ms = 0;
        for (auto& [e0, e1] : f.plain) {
          float ms = 0.f;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          plain_ms += ms;
        }
        const double gaps = 1000.0 * plain_ms / f.plain.size() - total;
        printf("%s: %slaunch_gaps host %.3f\n", tag, rows, gaps);
        total += gaps;
      }
      return total;
    };
    const lk_form& d = form(1);
    if (d.runs) printf("PROFILE_TOTAL_US: %.3f\n", lines(d, "PROFILE", ""));
    for (auto& f : forms) {
      if (f.rows == 1 || !f.runs) continue;
      char rows[16];
      snprintf(rows, sizeof rows, "%d ", f.rows);
      const double chunk = lines(f, "PROFILE_CHUNK", rows);
      printf("PROFILE_CHUNK_TOTAL_US: %d %.3f\n", f.rows, chunk);
    }
  }

  // How many steps of each form the profiled run took.
  void print_runs() {
    for (auto& f : forms)
      if (f.runs || !f.plain.empty()) printf("PROFILE_RUNS: %d %d\n", f.rows, f.runs + (int)f.plain.size());
  }
};

// The workload's prompt: `n` tokens of the vocabulary, the same for every lane of the model.
static std::vector<int> lk_workload_tokens(int n, int vocab) {
  std::vector<int> t(n);
  unsigned long long h = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < n; ++i) {
    h ^= h >> 31; h *= 0xBF58476D1CE4E5B9ULL; h ^= h >> 29; h += 0x94D049BB133111EBULL;
    t[i] = (int)(h % (unsigned long long)vocab);
  }
  return t;
}

// Runs the prompts and prints each one's lines; appends their logits when `logits` is given.
static void lk_run_prompts(lk_session& x, const lk_args& a, std::vector<float>* logits) {
  for (auto& job : a.jobs) {
    const lk_outcome o = x.generate(job.second, job.first, logits);
    printf("TOKENS:");
    for (int t : o.tokens) printf(" %d", t);
    printf("\nPREFILL_MS: %.3f\n", o.prefill_ms);
    const int n_gen = job.first;
    if (n_gen > 1)
      printf("DECODE_MS_PER_TOKEN: %.4f\nDECODE_TOK_PER_S: %.2f\n", o.decode_ms / (n_gen - 1),
             1000.0 * (n_gen - 1) / o.decode_ms);
    fflush(stdout);
  }
}

// The measurement in one process: the prompts (their tokens and logits: the checks; timed, and profiled when there is
// no workload), then the workload (--warmup untimed runs, --repeat timed ones, and one profiled run under --profile),
// then the prompts again under each --stagger-check seed, their logits compared with the first run's bit for bit.
static int lk_drive(lk_args& a, std::vector<lk_form>& forms, const lk_state& s, bool graphs) {
  // Each phase's wall time, for the record of where a measurement's time goes.
  auto t = std::chrono::steady_clock::now();
  auto phase = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    printf("PHASE_MS: %s %.1f\n", name, std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  };
  lk_session x(forms, s, graphs);
  const bool workload = a.workload_prompt > 0;
  int prompt_decode = 0;
  for (auto& job : a.jobs) prompt_decode += std::max(job.first - 1, 0);
  x.profile(a.prof && !workload, prompt_decode);
  const bool keep = a.logits || !a.stagger_check.empty();
  std::vector<float> logits;
  lk_run_prompts(x, a, keep ? &logits : nullptr);
  if (x.prof) {
    x.print_profile();
    x.print_runs();
  }
  phase("prompts");
  if (workload) {
    x.profile(false, 0);
    const std::vector<int> tokens = lk_workload_tokens(a.workload_prompt, s.vocab);
    // A warm-up run prefills the whole prompt (every chunk form the workload takes runs once) and decodes one step:
    // the decode step's graph is the same at every position.
    // --cutoff: a run's figures (a warm-up's decode step standing for all of them) against the limit; past it, the
    // timed runs and the profile are left out (a screen need not time to the end what is already too slow).
    bool cut = false;
    auto past_cutoff = [&](const lk_outcome& o, int gen) {
      if (a.cutoff_on < 0) return false;
      const double step = gen > 1 ? o.decode_ms / (gen - 1) : 0.0;
      const double total = o.prefill_ms + step * (a.workload_gen - 1);
      const double figure = a.cutoff_on == 0 ? total : a.cutoff_on == 1 ? step : o.prefill_ms;
      if (!(figure > a.cutoff_ms)) return false;
      printf("CUTOFF: %d %d %.4f %.5f %.4f %.4f\n", a.workload_prompt, a.workload_gen, o.prefill_ms, step, total,
             a.cutoff_ms);
      fflush(stdout);
      return true;
    };
    for (int i = 0; i < a.warmup && !cut; ++i) {
      const int gen = std::min(a.workload_gen, 2);
      const lk_outcome o = x.generate(tokens, gen, nullptr);
      cut = i == a.warmup - 1 && past_cutoff(o, gen);
    }
    for (int i = 0; i < a.repeat && !cut; ++i) {
      const lk_outcome o = x.generate(tokens, a.workload_gen, nullptr);
      printf("WORKLOAD: %d %d %d %.4f %.5f %.4f\n", i + 1, a.workload_prompt, a.workload_gen, o.prefill_ms,
             a.workload_gen > 1 ? o.decode_ms / (a.workload_gen - 1) : 0.0, o.prefill_ms + o.decode_ms);
      fflush(stdout);
      cut = i == 0 && a.warmup == 0 && past_cutoff(o, a.workload_gen);
    }
    phase("workload");
    if (a.prof && !cut) {
      // The profiled run: the whole prefill and at most 16 decode steps (each launch's mean is as good after 16);
      // PROFILE_RUNS says how many steps of each form one run of the workload takes.
      const int gen = std::min(a.workload_gen, 17);
      x.profile(true, gen - 1);
      x.generate(tokens, gen, nullptr);
      x.print_profile();
      std::vector<std::pair<int, int>> steps;  // (rows, steps) of one run of the workload, its chunks' in order
      auto add = [&](int rows, int n) {
        for (auto& e : steps) if (e.first == rows) { e.second += n; return; }
        steps.push_back({rows, n});
      };
      for (int at = 0; at < a.workload_prompt;) {
        int rows = 1;
        for (auto& f : forms) if (f.rows > rows && f.rows <= a.workload_prompt - at) rows = f.rows;
        add(rows, 1);
        at += rows;
      }
      add(1, a.workload_gen - 1);
      for (auto& [rows, n] : steps) if (n) printf("PROFILE_RUNS: %d %d\n", rows, n);
      phase("profile");
    }
  }
  if (keep) printf("LOGITS_HASH: %016llx\n", (unsigned long long)lk_xxh64((const uint8_t*)logits.data(), logits.size() * 4));
  if (!a.stagger_check.empty()) {
    x.profile(false, 0);
    const bool stagger = lk_stagger;
    const unsigned long long seed = lk_seed;
    for (unsigned long long check : a.stagger_check) {
      lk_stagger = true;
      lk_seed = check;
      x.capture(graphs);
      std::vector<float> again;
      for (auto& job : a.jobs) x.generate(job.second, job.first, &again);
      const bool same = again.size() == logits.size() && memcmp(again.data(), logits.data(), logits.size() * 4) == 0;
      printf("STAGGER_CHECK: %llu %s\n", check, same ? "same" : "differs");
      fflush(stdout);
    }
    lk_stagger = stagger;
    lk_seed = seed;
    x.capture(graphs);
    phase("stagger");
  }
  if (a.logits) {
    fwrite(logits.data(), 4, logits.size(), a.logits);
    fclose(a.logits);
    a.logits = nullptr;
  }
  if (x.attached) lk_cupti_detach();
  fflush(stdout);
  return 0;
}
