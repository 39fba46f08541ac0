#!/usr/bin/env bash
# Session 56, call 3 (prepared, not run: the budget went on refused starts; ~6 minutes on any GPU; carry .carry,
# bench/.ab_gemv56 and bench/.ab_gemv56s = gemv_bench at the tree without and with the switch: `nvcc -O3 -std=c++20
# -arch=sm_90 [-DLK_GEMV_STAGGER=2] -o bench/.ab_gemv56[s] bench/gemv_bench.cu`, ignored by git; ~17 s each here):
# LK_GEMV_STAGGER (kernels/shapes.cuh, a measurement switch): the odd warps of a decode GEMV's block shorten their first
# round by N units a lane, so that their rounds' loads fall between the even warps' rather than with them, where that
# costs them no extra round (kernels/gemv.cuh lk_gemv_stagger). On the 8B Q4_K_M that is the down projection alone
# (k 14,336: 448 units a row, 3.5 rounds of 128; its Q6_K form at 117 registers is one wave, 0.97, so every warp starts
# together and their 3.5 bursts of ~14 MB line up; ncu gave it 2.0 TB/s on the H100 against the gate/up's 2.25). The
# k 4,096 matrices (one round a row) and every Q8_0 matrix (whole rounds) are left as they are: the 8B Q8_0 is the
# control. A lane's units and their order do not change: the same sums.
# Then s56_call2.sh (the norms' early trigger where pdl_first is off: does it lose on the 0.6B?).
# Prediction: Q4_K_M B (2 units) +1-3%, C (1 unit) +0.5-2%; Q8_0 1.000x (no launch changes); logits bitwise equal.
# First gemv_bench's downs alone (GB_SHAPE=down, its lane-like window GB_LINK_NS 0 and 3,000): the Q4_K and Q6_K downs
# 1-3 us shorter with the switch (H100: the Q6_K down ~24 us in ncu), the Q8_0 down the same.
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
for ns in 0 3000; do
  for b in bench/.ab_gemv56 bench/.ab_gemv56s; do
    echo "== gemv_bench $b GB_LINK_NS=$ns"
    [ -x $b ] && GB_SHAPE=down GB_LINK_NS=$ns timeout 60 $b "lib rpw1,lib rpw2" 2>&1 | grep -E "down"
  done
done | tee $OUT/gemv-stagger.txt
echo "== 8B Q4_K_M T8: B LK_GEMV_STAGGER=2, C =1"
KNOBS="$T8" NVFLAGS_B=-DLK_GEMV_STAGGER=2 NVFLAGS_C=-DLK_GEMV_STAGGER=1 AB_SIDES="a b c" TYPE=q4_k_m ROUNDS=3 \
  PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 200 \
  bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee $OUT/ab-stagger.txt
echo "== 8B Q8_0 Q8 (the control): B LK_GEMV_STAGGER=2"
KNOBS="$Q8" NVFLAGS_B=-DLK_GEMV_STAGGER=2 TYPE=q8_0 ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  timeout 170 bash bench/ab_decode.sh $L $L /tmp/ab-q8 llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" |
  tee -a $OUT/ab-stagger.txt
S56_RUNS="qwen3-0.6b q4_k_m R06N" bash bench/calls/s56_call2.sh
