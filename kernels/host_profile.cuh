// The lane's host runtime (after host_memory.cuh): what runs around each launch: the --stagger stalls (stall.cuh's
// kernel, which only the runtime launches), the side streams' fork and join, and CUPTI's kernel records (loaded where
// the library is; host_clock.cuh's clocks read them).

bool lk_stagger = false;
unsigned long long lk_seed = 0;

// (Out of line where a program is one file, as the resident host is: a step's functions stay small.)
__attribute__((noinline)) void lk_before(cudaStream_t st, const cudaEvent_t* ev, int form, int i) {
  CKL();
  if (ev) CK(cudaEventRecord(ev[i], st));
  if (lk_stagger) lk_stall<<<1, 1, 0, st>>>(lk_stall_ns(lk_seed, form, i));
}

cudaStream_t lk_side[2];
// The events the side streams fork and join by.
static cudaEvent_t lk_fork_ev, lk_join_ev[2];
void lk_side_init() {
  for (int i = 0; i < 2; ++i) {
    CK(cudaStreamCreateWithFlags(&lk_side[i], cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&lk_join_ev[i], cudaEventDisableTiming));
  }
  CK(cudaEventCreateWithFlags(&lk_fork_ev, cudaEventDisableTiming));
}
void lk_fork(cudaStream_t st, int sides) {
  CK(cudaEventRecord(lk_fork_ev, st));
  for (int i = 0; i < sides; ++i) CK(cudaStreamWaitEvent(lk_side[i], lk_fork_ev, 0));
}
void lk_join(cudaStream_t st, int sides) {
  for (int i = 0; i < sides; ++i) {
    CK(cudaEventRecord(lk_join_ev[i], lk_side[i]));
    CK(cudaStreamWaitEvent(st, lk_join_ev[i], 0));
  }
}

__attribute__((noinline)) void lk_after(cudaStream_t st, const cudaEvent_t* ev, int n) {
  CKL();
  if (ev) CK(cudaEventRecord(ev[n], st));
}

// CUPTI, where the CUDA toolkit's library can be loaded: the hardware's start and end stamps of every kernel (activity
// records), so a step runs exactly as it does unprofiled, its graph untouched. Loaded at run time, so that only
// --profile needs the library; host_clock.cuh's clocks turn the stamps into launches' times.
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
    exit(LK_EXIT_CUDA);
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
