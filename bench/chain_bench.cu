// What one launch boundary of a decode step costs, and whether a data-driven hand-off beats it (#18: the 0.6B's step
// is ~230 launches, session 29's timeline spans 1.3-2.6 us a launch for ~0.5 us of work each). A chain of N tiny
// launches in one CUDA graph: each block of launch i reads a value launch i-1 wrote (another block's) and writes its
// own, so the chain's last values count the launches (checked: a read of a stale value shows). Modes:
//   plain   no programmatic dependent launch: each launch starts once the one before has finished;
//   pdl     griddepcontrol.wait, then launch_dependents (the lane's pdl);
//   first   launch_dependents, then wait (pdl_first);
//   flag    launch_dependents at once and no griddepcontrol.wait: thread 0 polls launch i-1's arrival counter
//           (ld.acquire.gpu) until all its blocks have arrived; each block, after its write and a barrier, arrives by
//           red.release.gpu on its own launch's counter (the counters zeroed by a memset at the graph's start);
//   flag+w  the same with a block's work of W ns (a spin on %globaltimer) after its read, as a small kernel's body.
// Prints us a launch (the median of the graph's replays over N: graph_time.cuh) for several grid sizes.
//
// build: nvcc -O3 -std=c++20 -arch=sm_90 -o chain_bench bench/chain_bench.cu     run: ./chain_bench
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "graph_time.cuh"

enum Mode { PLAIN, PDL, FIRST, FLAG };

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

template <Mode MODE>
__global__ void link(const float* in, float* out, unsigned* count, int i, unsigned work_ns) {
  const int b = blockIdx.x, B = gridDim.x;
  if constexpr (MODE == PDL) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  } else if constexpr (MODE == FIRST) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
  } else if constexpr (MODE == FLAG) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (threadIdx.x == 0 && i > 0)
      while (ld_acquire(count + i - 1) < (unsigned)B) {
      }
    __syncthreads();
  }
  float v = 0.f;
  if (i > 0) v = __ldcg(in + (b * 7 + 1) % B);
  if (work_ns) spin_ns(work_ns);
  if (threadIdx.x == 0) out[b] = v + 1.f;
  if constexpr (MODE == FLAG) {
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(count + i) : "memory");
  }
}

template <Mode MODE>
static void launch(cudaStream_t st, int blocks, const float* in, float* out, unsigned* count, int i, unsigned w) {
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(blocks);
  c.blockDim = dim3(128);
  c.stream = st;
  c.attrs = at;
  c.numAttrs = MODE == PLAIN ? 0 : 1;
  CK(cudaLaunchKernelEx(&c, link<MODE>, in, out, count, i, w));
}

template <Mode MODE>
static double run(int n, int blocks, unsigned work_ns, bool& ok) {
  float* buf;
  unsigned* count;
  CK(cudaMalloc(&buf, sizeof(float) * 2 * blocks));
  CK(cudaMalloc(&count, sizeof(unsigned) * n));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const double us = graph_us(st, n, [&] {
    CK(cudaMemsetAsync(count, 0, sizeof(unsigned) * n, st));
    for (int i = 0; i < n; ++i)
      launch<MODE>(st, blocks, buf + (i + 1) % 2 * blocks, buf + i % 2 * blocks, count, i, work_ns);
  });
  std::vector<float> h(blocks);
  CK(cudaMemcpy(h.data(), buf + (n - 1) % 2 * blocks, sizeof(float) * blocks, cudaMemcpyDeviceToHost));
  ok = std::all_of(h.begin(), h.end(), [&](float v) { return v == (float)n; });
  CK(cudaStreamDestroy(st));
  CK(cudaFree(buf));
  CK(cudaFree(count));
  return us;
}

int main() {
  const int n = 200;
  printf("us a launch (chain of %d, median of 10 graph replays); * = a stale value read\n", n);
  printf("%8s %8s %8s %8s %8s %10s %10s\n", "blocks", "plain", "pdl", "first", "flag", "pdl+1us", "flag+1us");
  for (int blocks : {8, 32, 132, 264, 528, 1056}) {
    bool ok[6];
    const double t[6] = {run<PLAIN>(n, blocks, 0, ok[0]), run<PDL>(n, blocks, 0, ok[1]),
                         run<FIRST>(n, blocks, 0, ok[2]), run<FLAG>(n, blocks, 0, ok[3]),
                         run<PDL>(n, blocks, 1000, ok[4]), run<FLAG>(n, blocks, 1000, ok[5])};
    printf("%8d", blocks);
    for (int m = 0; m < 6; ++m) printf(m < 4 ? " %7.2f%c" : " %9.2f%c", t[m], ok[m] ? ' ' : '*');
    printf("\n");
  }
}
