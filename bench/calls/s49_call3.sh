#!/usr/bin/env bash
# Session 49, call 3 (~5 minutes; carry .carry, bench/.ab_gemv). (1) Where the 0.6B's decode attention goes (31.5% of
# its step, 5.65 us a launch for a tile of work at short context; its SASS is 4,552 instructions, 73 KB, the largest
# kernel of the step but the chunk GEMMs): ncu on the step's lk_attention_mma (R06S, a 4-layer qwen3-0.6b Q4_K_M, a
# 5-token prompt), once with the caches flushed before each pass (ncu's default: a cold instruction cache, as on an SM
# that ran GEMVs before) and once kept (warm). Hypothesis: instruction fetch -- stall_no_instruction a large share
# cold, the cold launch >= 1.5x the warm one. (2) Every decode GEMV shape and variant of bench/gemv_bench.cu on this
# GPU (what the 8B's matrices reach alone).
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
for c in all none; do
  echo "== ncu, the step attention, cache-control $c"
  LAYERS=4 TYPE=q4_k_m KNOBS="$R06S" NCU_CACHE=$c SKIP=4 NCU_LINES=120 timeout 150 \
    bash bench/ncu_kernels.sh $L /tmp/ncu-$c qwen3-0.6b lk_attention_mma 3 2>&1 | tee $OUT/ncu-$c.txt |
    grep -E "^  [a-z_].*\(|Duration|no_instruction|stalled_(long|short)_scoreboard|barrier|wait_per|math_pipe|Registers"
  cp /tmp/ncu-$c/*.ncuk.txt $OUT/ 2> /dev/null
done
[ -z "${NO_GEMV:-}" ] && echo "== gemv_bench"
[ -z "${NO_GEMV:-}" ] && [ -x bench/.ab_gemv ] && timeout 200 bench/.ab_gemv 2>&1 | tee $OUT/gemv.txt | grep -E "lib rpw2|lib short|stream rpw4 ah1 |base"
