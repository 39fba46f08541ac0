#!/usr/bin/env bash
# Session 53, call 5 (~3 minutes on any GPU; carry .carry (the tree's build) and bench/.ab_pbench53b).
# (Ran in session 54 as s53_call6.sh: LK_K4_INT_SCALE 1.000x / 1.001x, bitwise equal; the switch is removed from
# the tree since 5696caf, so -DLK_K4_INT_SCALE=1 no longer changes a lane: kept as the record of the call.)
# (1) s53_call4.sh (persistent_bench: the staged stream alone; its prediction in its header).
# (2) LK_K4_INT_SCALE=1 (B and D, a measurement switch in the tree's build; A and C without): Q4_K / Q5_K products
# with the scale and the min times their sums in integers: one int-to-float conversion each where two ran (the
# conversion pipe a quarter of the FMA rate; the Q4_K loops' I2F in PTX 17 -> 9 a round of 4 units at a row a warp,
# 33 -> 17 at two and in the gate/up). Prediction: logits bitwise equal (d sc and dmin mn exact in f32,
# sc S and mn A exact integers); decode the 8B +0-2% (T8 and REC), the 0.6B +0-1%; if ~0, the conversions are not
# what the GEMVs wait on either (call 1: the activations' sums, 8 dp4a, were not).
set -u
bash bench/calls/s53_call4.sh
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh  # (REC, R06S)
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
echo "== llama-3.1-8b: a/b T8 (B + LK_K4_INT_SCALE=1), c/d REC (D + the switch)" | tee -a $OUT/ab.txt
KNOBS="$T8" KNOBS_A="$T8" KNOBS_C="$REC" KNOBS_D="$REC" LT_C=$L AB_SIDES="a b c d" NVFLAGS_B=-DLK_K4_INT_SCALE=1 \
  NVFLAGS_D=-DLK_K4_INT_SCALE=1 TYPE=q4_k_m ROUNDS=2 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 240 \
  bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
echo "== qwen3-0.6b R06S: B + LK_K4_INT_SCALE=1" | tee -a $OUT/ab.txt
KNOBS="$R06S" NVFLAGS_B=-DLK_K4_INT_SCALE=1 TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  timeout 120 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
