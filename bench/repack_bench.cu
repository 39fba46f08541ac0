// The load's host work (issue #18's load time): lk_planes, the repacking of a block-format matrix's checkpoint blocks
// into the planes a lane uploads, on all the host's cores (lk_parallel) against block by block on one, over ~1 GB of
// random Q4_K, Q6_K, Q4_0, Q5_K, Q2_K and Q3_K blocks (the bytes' contents do not change the work). Checks that both
// give the same planes and prints GB/s of checkpoint bytes for each, and for lk_planes with its staging's allocation
// and reusing it, and a digest of the planes (the same input every run: a change that keeps the output keeps it).
// Host code only: it runs where no GPU is.
//
// build: nvcc -O3 -std=c++17 -o repack_bench bench/repack_bench.cu     run: ./repack_bench [MB]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// clang-format off
#include "../kernels/exits.cuh"
#include "../kernels/shapes.cuh"
#include "../kernels/xxh64.cuh"
#include "../kernels/host_api.cuh"
#include "../kernels/host_memory.cuh"
// clang-format on

static double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
  const size_t mb = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  std::mt19937_64 rng(1);
  printf("%-6s %10s %12s %12s %12s %12s %8s %17s  (%u threads)\n", "format", "MB", "1 core GB/s", "all GB/s",
         "lk_planes", "reused", "same", "planes' xxh64", std::thread::hardware_concurrency());
  for (int t : {LK_Q4_K, LK_Q6_K, LK_Q4_0, LK_Q5_K, LK_Q2_K, LK_Q3_K}) {
    const size_t be = (size_t)lk_block_elems(t), bb = (size_t)lk_block_bytes(t);
    const size_t blocks = mb * 1000000 / bb, n = blocks * be;
    std::vector<uint8_t> src(blocks * bb);
    for (size_t i = 0; i + 8 <= src.size(); i += 8) {
      const uint64_t v = rng();
      memcpy(&src[i], &v, 8);
    }
    std::vector<std::vector<uint8_t>> one(4);
    for (int i = 0; i < 4; ++i) one[i].resize(lk_plane_bytes(t, i, n));
    size_t per[4];
    for (int i = 0; i < 4; ++i) per[i] = lk_plane_bytes(t, i, be);
    const double serial = seconds([&] {  // block by block: each call one block, so one thread
      for (size_t b = 0; b < blocks; ++b)
        lk_repack(t, src.data() + b * bb, be, one[0].data() + b * per[0], one[1].data() + b * per[1],
                  one[2].data() + b * per[2], one[3].data() + b * per[3]);
    });
    std::vector<std::vector<uint8_t>> all(4);
    for (int i = 0; i < 4; ++i) all[i].resize(lk_plane_bytes(t, i, n));
    const double parallel =
        seconds([&] { lk_repack(t, src.data(), n, all[0].data(), all[1].data(), all[2].data(), all[3].data()); });
    std::vector<lk_plane> fresh;
    lk_planes_done();
    const double planes = seconds([&] { fresh = lk_planes(t, src.data(), n); });  // (with the staging's allocation)
    const double again = seconds([&] { fresh = lk_planes(t, src.data(), n); });   // (the staging reused)
    bool same = true;
    for (int i = 0; i < 4; ++i) same = same && fresh[i].size() == one[i].size() && !memcmp(fresh[i].data(), one[i].data(), one[i].size());
    uint64_t digest = 0;  // (a change to lk_repack that keeps its output keeps this, for the same MB)
    for (int i = 0; i < 4; ++i) digest = digest * 31 + lk_xxh64(one[i].data(), one[i].size());
    printf("%-6d %10zu %12.2f %12.2f %12.2f %12.2f %8s  %016llx\n", t, mb, src.size() / serial / 1e9,
           src.size() / parallel / 1e9, src.size() / planes / 1e9, src.size() / again / 1e9,
           all == one && same ? "yes" : "NO", (unsigned long long)digest);
  }
  return 0;
}
