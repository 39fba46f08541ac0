// How fast a block can stream a contiguous run of bytes through the SM the way the decode step's tensor-core
// attention stages its tiles (issue #19: at depth it reads ~2.4-3 TB/s, and a second block an SM adds nothing), with
// nothing else to do: tiles of TILE bytes by cp.async (16 bytes a thread a copy) in STAGES stages, each tile waited
// for and "used" (a word a thread summed) before its stage is refilled -- against the same loads into registers
// (LDG.128, the tile's loads in flight together) -- for 1, 2, 4 (and for the loads 8) blocks of 128 threads an SM.
// Prints TB/s a line.
//
// build: nvcc -O3 -std=c++17 -arch=sm_90 -o stream_bench bench/stream_bench.cu     run: ./stream_bench
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                    \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

constexpr int kThreads = 128;

__device__ void cp16(void* dst, const void* src) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
}
__device__ void commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ void wait_groups() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Block b streams bytes [b * per, (b + 1) * per) of src in tiles of TILE bytes through STAGES stages.
template <int TILE, int STAGES>
__global__ void __launch_bounds__(kThreads) stream_cp(const int4* __restrict__ src, size_t per, int* out) {
  extern __shared__ int4 sm[];
  constexpr int U = TILE / 16;  // 16-byte units a tile
  const int4* s = src + blockIdx.x * (per / 16);
  const int tiles = (int)(per / TILE);
  auto stage = [&](int t) {
#pragma unroll
    for (int i = 0; i < U / kThreads; ++i) {
      const int c = threadIdx.x + i * kThreads;
      cp16(sm + (t % STAGES) * U + c, s + (size_t)t * U + c);
    }
    commit();
  };
  for (int i = 0; i < STAGES - 1; ++i) i < tiles ? stage(i) : commit();
  int acc = 0;
  for (int t = 0; t < tiles; ++t) {
    t + STAGES - 1 < tiles ? stage(t + STAGES - 1) : commit();
    wait_groups<STAGES - 1>();
    __syncthreads();
    acc += sm[(t % STAGES) * U + threadIdx.x].x;
    __syncthreads();
  }
  if (acc == 0x7fffffff) *out = acc;
}

// The same bytes into registers: a tile's TILE / 16 / 128 loads a thread in flight together, then summed.
template <int TILE>
__global__ void __launch_bounds__(kThreads) stream_ldg(const int4* __restrict__ src, size_t per, int* out) {
  constexpr int N = TILE / 16 / kThreads;
  const int4* s = src + blockIdx.x * (per / 16);
  const int tiles = (int)(per / TILE);
  int acc = 0;
  for (int t = 0; t < tiles; ++t) {
    int4 v[N];
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = __ldg(s + (size_t)t * (TILE / 16) + threadIdx.x + i * kThreads);
#pragma unroll
    for (int i = 0; i < N; ++i) acc += v[i].x ^ v[i].w;
  }
  if (acc == 0x7fffffff) *out = acc;
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t total = size_t(4) << 30;  // 4 GB: far past L2
  int4* src;
  int* out;
  CK(cudaMalloc(&src, total));
  CK(cudaMalloc(&out, 4));
  CK(cudaMemset(src, 1, total));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto time = [&](auto launch, int blocks) {
    std::vector<float> v;
    for (int r = 0; r < 6; ++r) {
      CK(cudaEventRecord(e0));
      launch(blocks);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r) v.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  printf("%-22s %8s %10s\n", "form", "blocks", "TB/s");
  for (int per_sm : {1, 2, 4, 8}) {
    const int blocks = sms * per_sm;
    const size_t per = total / blocks / 65536 * 65536;  // (whole tiles of every size below)
    const double bytes = double(per) * blocks;
    auto cp = [&](auto kernel, int smem, const char* name) {
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      const float ms = time([&](int b) { kernel<<<b, kThreads, smem>>>(src, per, out); }, blocks);
      printf("%-22s %8d %10.3f\n", name, blocks, bytes / ms / 1e9);
    };
    if (per_sm <= 2) cp(stream_cp<32768, 3>, 3 * 32768, "cp.async 32K x3");
    if (per_sm <= 4) {
      cp(stream_cp<32768, 2>, 2 * 32768, "cp.async 32K x2");
      cp(stream_cp<16384, 4>, 4 * 16384, "cp.async 16K x4");
      cp(stream_cp<8192, 4>, 4 * 8192, "cp.async 8K x4");
    }
    const float ms = time([&](int b) { stream_ldg<8192><<<b, kThreads>>>(src, per, out); }, blocks);
    printf("%-22s %8d %10.3f\n", "ldg 8K", blocks, bytes / ms / 1e9);
    const float ms2 = time([&](int b) { stream_ldg<4096><<<b, kThreads>>>(src, per, out); }, blocks);
    printf("%-22s %8d %10.3f\n", "ldg 4K", blocks, bytes / ms2 / 1e9);
  }
  return 0;
}
