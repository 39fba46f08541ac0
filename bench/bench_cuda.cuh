// What the CUDA benchmarks share (gemv_bench.cu, gemm_bench.cu): the error check, random matrices of a block format
// at a shape (several copies, rotated through more bytes than L2 holds), a launch under programmatic dependent launch,
// and the median time of a captured graph. Included after the kernel library.
#pragma once

#include "cuda_check.cuh"
#include "graph_time.cuh"

// A Q8_0 matrix's planes: 0 its int8 codes, 2 its f16 scales (a 32-block's), as the lane uploads it (lk_q8).
static size_t bench_plane_bytes(int type, int p, size_t e) {
  if (type == LK_Q8_0) return p == 0 ? e : p == 2 ? e / 16 : 0;
  return lk_plane_bytes(type, p, (unsigned long long)e);
}

struct Mat {
  int type, n, k;
  std::vector<void*> planes[4];  // one set of planes a copy
  size_t bytes() const {
    size_t b = 0;
    for (int p = 0; p < 4; ++p) b += bench_plane_bytes(type, p, (size_t)n * k);
    return b;
  }
};

static std::mt19937_64 rng(7);

static void* device_random(size_t bytes, int type, int plane) {
  std::vector<unsigned char> h(bytes);
  for (auto& c : h) c = (unsigned char)rng();
  // f16 fields kept finite and small: Q4_K's d and dmin (the header's first 4 bytes), Q6_K's d.
  auto small_half = [&](size_t at) {
    const unsigned short v = (unsigned short)(0x1800 + (rng() & 0x3ff));
    std::memcpy(&h[at], &v, 2);
  };
  if (type == LK_Q4_K && plane == 2)
    for (size_t i = 0; i + 16 <= bytes; i += 16) small_half(i), small_half(i + 2);
  if ((type == LK_Q6_K && plane == 3) || (type == LK_Q8_0 && plane == 2))
    for (size_t i = 0; i + 2 <= bytes; i += 2) small_half(i);
  void* d = nullptr;
  CK(cudaMalloc(&d, std::max<size_t>(bytes, 16)));
  CK(cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice));
  return d;
}

static Mat make(int type, int n, int k, int copies) {
  Mat m{type, n, k, {}};
  for (int c = 0; c < copies; ++c)
    for (int p = 0; p < 4; ++p) {
      const size_t b = bench_plane_bytes(type, p, (size_t)n * k);
      m.planes[p].push_back(b ? device_random(b, type, p) : nullptr);
    }
  return m;
}

static lk_q8 view_q8(const Mat& m, int c) {
  return lk_q8{static_cast<const signed char*>(m.planes[0][c]), static_cast<const __half*>(m.planes[2][c])};
}
template <int T>
static lk_blk<T> view(const Mat& m, int c) {
  return lk_blk<T>{static_cast<const unsigned char*>(m.planes[0][c]), static_cast<const unsigned char*>(m.planes[1][c]),
                   static_cast<const unsigned char*>(m.planes[2][c]), static_cast<const __half*>(m.planes[3][c])};
}

// A launch under programmatic dependent launch, with `smem` bytes of dynamic shared memory (allowed past 48 KiB).
template <class K, class... A>
static void launch_ex(K kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, A... args) {
  if (smem > 48 * 1024) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}
template <class K, class... A>
static void launch(K kernel, int grid, int block, cudaStream_t s, A... args) {
  launch_ex(kernel, dim3(grid), dim3(block), 0, s, args...);
}

