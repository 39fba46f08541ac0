// The lane's host runtime as a program sees it: the types and functions its emitted part (and the resident host) calls.
// The definitions are in host.cuh, host_memory.cuh, host_profile.cuh, host_clock.cuh and host_drive.cuh, which a lane
// compiles apart as its runtime (lane_host.cu: one object per lane-tune runtime and GPU architecture, built once and
// linked into every lane, compiler/src/lane/build.cpp) and the resident host compiles in its one file. Nothing here
// depends on a lane's knobs, so that every lane links the same runtime.
//
// Exits with kernels/exits.cuh's codes.

// Runs a CUDA call; a failure exits with LK_EXIT_CUDA, saying where.
#define CK(x)                                                                                          \
  do {                                                                                                 \
    cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) {                                                                           \
      fprintf(stderr, "cuda error %s:%d: %s (%s)\n", __FILE__, __LINE__, cudaGetErrorString(e_), #x); \
      exit(LK_EXIT_CUDA);                                                                              \
    }                                                                                                  \
  } while (0)
#define CKL() CK(cudaGetLastError())

// == the command line (host.cuh)

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

// Parses the command line into `a`; returns -1 when the program should go on, else its exit code.
int lk_parse_args(int argc, char** argv, lk_args& a, int vocab, int ctx);

// == memory and uploads (host_memory.cuh)

// Maps the checkpoint and checks it is the one the program was compiled against (size, digest of its header).
const uint8_t* lk_open_checkpoint(const char* path, uint64_t size, uint64_t data_start, uint64_t digest);

// Reads the sidecar and checks it is this program's own (size and digest).
std::vector<uint8_t> lk_read_sidecar(const char* path, uint64_t bytes, uint64_t digest);

// The device pool every standing array is carved from, and the mapped host pool of the matrices moved off the device:
// each pool's bytes and how many of them are carved so far.
extern unsigned char *lk_pool, *lk_hpool;
extern size_t lk_pool_bytes, lk_pool_at, lk_hpool_bytes, lk_hpool_at;

// `n` bytes rounded up to the pools' alignment (256).
inline size_t lk_round(size_t n) { return (n + 255) / 256 * 256; }

// The next `count` elements of the device pool (or of the host pool when `host`); exits when the pool is spent.
template <class T>
T* lk_carve(size_t count, bool host) {
  size_t n = lk_round(count * sizeof(T));
  unsigned char*& pool = host ? lk_hpool : lk_pool;
  size_t& at = host ? lk_hpool_at : lk_pool_at;
  size_t bytes = host ? lk_hpool_bytes : lk_pool_bytes;
  if (at + n > bytes) { fprintf(stderr, "the program allocates past its %zu %s bytes\n", bytes, host ? "host" : "device"); exit(LK_EXIT_ACCOUNTING); }
  T* p = (T*)(pool + at);
  at += n;
  return p;
}

// Zeroed device memory for carried state (caches, position, counters).
template <class T>
T* lk_zeroed(size_t n) {
  T* d = lk_carve<T>(n, false);
  CK(cudaMemset(d, 0, n * sizeof(T)));
  return d;
}

// Decides where the matrices live: the device's free memory (or --device-bytes) less the fixed arrays, the matrices
// moved to mapped host memory in the compiled order until the rest fits. Returns how many moved.
int lk_place(size_t device_bytes, size_t fixed, const size_t* order, int n);

// A Q8_0 matrix's rows out of the checkpoint (34-byte blocks: an f16 scale, 32 int8), carved and uploaded as int8
// rows (`*q`) and their scales (`*s`).
void lk_upload_q8_rows(const uint8_t* file, uint64_t offset, size_t rows, size_t cols, bool host, signed char** q,
                       __half** s);

// A plane of a matrix repacked in host memory: its bytes and their count, 0 for a plane the format lacks.
struct lk_plane {
  uint8_t* bytes = nullptr;
  size_t n = 0;
  uint8_t* data() const { return bytes; }
  size_t size() const { return n; }
  bool empty() const { return n == 0; }
};

// The planes of a block-format matrix of `n` elements (ggml type `t`) repacked on the host's cores from the
// checkpoint's blocks at `src`, in shapes.cuh's plane order. They lie in one staging area that the next call reuses
// (grown to the largest matrix, its pages touched once: first touches of fresh gigabytes cost a load more than the
// repacking; lk_upload_q8_rows splits Q8_0 blocks in it too), valid until then or until lk_planes_done frees it at the
// load's end.
std::vector<lk_plane> lk_planes(int t, const uint8_t* src, size_t n);
// The same planes carved (in plane order, those the format has) and uploaded into dev[4] (null for a plane the format
// lacks), the repacking of each slice overlapped with the copies of the one before (pinned staging, a copy stream).
void lk_upload_planes(int t, const uint8_t* src, size_t n, bool host, uint8_t* dev[4]);
// The load's end: waits for its last copies and frees the staging.
void lk_planes_done();

// `bytes` bytes at `src` carved and uploaded as they are (a plain matrix, a vector, a plane, a sidecar constant).
void* lk_upload_bytes(const void* src, size_t bytes, bool host);

// A launch under programmatic dependent launch (the `pdl` knob): it may start while the launch before it drains, its
// blocks held at lk_pdl_entry until that one is done.
template <class... P, class... A>
void lk_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t st, A&&... args) {
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

// == around each launch (host_profile.cuh)

// The stagger's switch and seed, from the command line.
extern bool lk_stagger;
extern unsigned long long lk_seed;

// Before launch `i` of form `form`: its --profile event (when `ev`: steps run uncaptured, timed by events), and
// under --stagger its stall. Any error of the launches before it surfaces here.
void lk_before(cudaStream_t st, const cudaEvent_t* ev, int form, int i);
#if LK_TIMELINE
// kernels/prelude.cuh's measurement switch: the program's recording of one decode step, on or off, and its records.
void lk_tl_arm(int on);
void lk_tl_dump();
#endif

// After a step's `n` launches: its last launch checked, and its closing --profile event.
void lk_after(cudaStream_t st, const cudaEvent_t* ev, int n);

// Side streams (side_streams): a group of independent launches forks from the step's stream before its first launch
// (the side streams wait for what the step's stream holds so far) and joins it after its last. In a capture the fork
// and join are the graph's edges. lk_side_init makes the streams once.
extern cudaStream_t lk_side[2];
void lk_side_init();
void lk_fork(cudaStream_t st, int sides);
void lk_join(cudaStream_t st, int sides);

// == forms and the drive loop (host_clock.cuh, host_drive.cuh)

// One form of the lane: its rows, its step, its token input and its logits, and its launches' names for --profile;
// then what the drive loop keeps of it.
struct lk_form {
  int rows;
  std::function<void(cudaStream_t, const cudaEvent_t*)> step;  // the events: one before each launch, or null
  int* tok;
  const void* logits;  // vocab lk_act values (the state's act_bytes each)
  std::vector<const char*> kinds, outputs;
  std::vector<int> kernels;         // the kernels each launch runs
  std::vector<cudaEvent_t> events;  // one before each launch and one after the last (lk_event_clock)
  cudaGraphExec_t exec = nullptr;
  std::vector<double> ms;  // summed time of each launch over the profiled steps
  int runs = 0;            // the profiled steps
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> plain;  // lk_stream_stamps: the steps run before CUPTI attached
};

// The carried state the drive loop resets and reads, and the size of the lane's activations.
struct lk_state {
  int *pos, *tok, *gen, *count, *prompt;
  int vocab, ctx;
  int act_bytes;
};

// The measurement in one process: the prompts (their tokens and logits: the checks; timed, and profiled when there is
// no workload), then the workload (--warmup untimed runs, --repeat timed ones, and one profiled run under --profile),
// then the prompts again under each --stagger-check seed, their logits compared with the first run's bit for bit.
// Prints the output contract's lines; returns the program's exit code.
int lk_drive(lk_args& a, std::vector<lk_form>& forms, const lk_state& s, bool graphs);
