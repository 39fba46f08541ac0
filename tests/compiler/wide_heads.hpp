// The gemmas' heads, 256 wide, on the tensor cores (attn_mma's wide form), as the CPU plan model's tests
// (lane_sim_test.cpp) and the nvcc build tests (lane_test.cpp) both take them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compiler/synth.hpp"

namespace lt::test {

// tiny-<arch> (gemma2: caps of 5; gemma3: q/k norms, linear scaling 8; both a sliding layer of window 16, then a
// global one) with 4 query heads 256 wide over 2 key/value heads (gemma2) or 1 (gemma3), trained to 8,192 positions
// (a lane holds 4,096 unless its context says more).
inline synth::Preset wide_gemma(const std::string& arch) {
  synth::Preset p = synth::preset("tiny-" + arch);
  p.name = "wide-" + arch;
  p.heads = 4;
  p.kv_heads = arch == "gemma3" ? 1 : 2;
  p.head_dim = 256;
  p.context = 8192;
  return p;
}

// The decode step's wide block with rope and the append folded in, its own fold of 2 splits (past 4 tiles of
// positions), chunks of 64 rows.
inline nlohmann::json wide_step_knobs() {
  return {{"numerics", "int8"}, {"gemv_prequant", true}, {"kv_cache", "f16"}, {"attn_mma", 2},
          {"fuse_qkv", true},   {"fuse_rope_kv", true},  {"attn_splits", 2},  {"max_chunk", 64}};
}

}  // namespace lt::test
