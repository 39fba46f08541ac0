// The GPU's read-only streaming rate: a kernel that reads `bytes` with 16-byte loads (grid-stride, the sum kept so the
// loads are not dropped), timed with CUDA events, best of several runs after a warm-up. The bound of a decode step:
// the bytes it must read over this rate.
//
// build: nvcc -O3 -arch=sm_90 -o bw bench/bw.cu     run: ./bw [GB]   prints READ_TB_PER_S: <rate>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

__global__ void read_all(const int4* __restrict__ p, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const int4 v = __ldg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // never true for the zeroed buffer; keeps the loads
}

int main(int argc, char** argv) {
  const double gb = argc > 1 ? atof(argv[1]) : 8.0;
  const size_t bytes = (size_t)(gb * 1e9) / 16 * 16, n = bytes / 16;
  int4* p = nullptr;
  int* sink = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess || cudaMalloc(&sink, 4) != cudaSuccess) {
    fprintf(stderr, "cannot allocate %.1f GB\n", gb);
    return 1;
  }
  cudaMemset(p, 0, bytes);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  for (int i = 0; i < 8; ++i) {
    cudaEventRecord(a);
    read_all<<<sms * 8, 512>>>(p, n, sink);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (i > 0 && ms < best) best = ms;
  }
  if (cudaGetLastError() != cudaSuccess) return 1;
  printf("READ_TB_PER_S: %.3f\n", bytes / (best * 1e-3) / 1e12);
  return 0;
}
