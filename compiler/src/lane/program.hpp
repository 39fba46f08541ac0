// What the printer of lane.cu and the lane image share: the program's head, the kernel library's device part, the
// fixed device bytes and the kernels that need more than the default shared memory.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/knobs.hpp"
#include "compiler/lane_schedule.hpp"
#include "compiler/lowering.hpp"

namespace lt::lane {

// The text every kernel module starts with under knobs `k`: the includes the device library reads, its number types
// (lk_act, lk_acc) and the library's switches (LK_INT8, LK_KV, LK_PDL_FIRST), with model `m` its own (LK_GELU where its
// dense FFN gates by GELU, the gemmas; LK_ATTN_SOFTCAP and LK_FINAL_SOFTCAP where it softcaps its logits, gemma2). A
// module compiles device code alone, and nvcc reads every header it is given (the host's C++ headers cost a module
// ~0.4 s of its ~1.9).
std::string module_head(const knobs::Knobs& k, const model::Model* m = nullptr);
// What a program (a lane, the resident host) starts with: the host's includes too, then module_head.
std::string program_head(const knobs::Knobs& k, const model::Model* m = nullptr);

// The kernel library's device files in the order a program includes them (the host side left out): what a kernel
// module compiles.
std::string device_library();

// The library's optional parts (kernels/prelude.cuh) a program or kernel module needs, from the kernel instances it
// calls: the block formats, the tensor-core GEMMs, the tiled GEMM; each on only where used, so that nvcc reads no more
// than it compiles.
struct LibraryParts {
  bool blocks = false, mma = false, gemm_tile = false, attn_mma = false, gemm_half = false;
  void need(const std::string& instance);
  std::string switches() const;  // the #defines a program's head carries
};

// The kernel library as the resident host includes it: the device files, then the host runtime.
std::string resident_library();

// The device bytes a lane holds besides its matrices: vectors, sidecar constants, carried state and the arena.
size_t fixed_bytes(const Schedule& p);

// The kernel instances of `calls` ([form][launch][call]) that take more than 48 KiB of dynamic shared memory, each
// once, with the most they take.
std::vector<std::pair<std::string, size_t>> large_smem(const std::vector<std::vector<std::vector<KernelCall>>>& calls);

}  // namespace lt::lane
