// The CUDA benchmarks' timing: the median of event-timed runs, and of a captured graph's replays. Needs only the CUDA
// runtime (chain_bench.cu includes it without the kernel library).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_check.cuh"

// A kernel's thread spinning `ns` nanoseconds of the global timer: a launch of a set length (chain_bench's small
// kernel's body, gemv_bench's GB_LINK_NS).
__device__ __forceinline__ void spin_ns(unsigned ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
}

// Median microseconds of `run` (enqueueing its work on stream s), timed by events 12 times, the first 2 as warm-up.
template <class Run>
static double median_us(cudaStream_t s, const Run& run) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int rep = 0; rep < 12; ++rep) {
    CK(cudaEventRecord(a, s));
    run();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    if (rep >= 2) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms[ms.size() / 2] * 1000.0;
}

// Median microseconds of one `body` (each enqueueing `per` repetitions on stream s), captured once as a CUDA graph and
// replayed (median_us).
template <class Body>
static double graph_us(cudaStream_t s, int per, const Body& body) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  body();
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  const double us = median_us(s, [&] { CK(cudaGraphLaunch(exec, s)); }) / per;
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  return us;
}
