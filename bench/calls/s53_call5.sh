#!/usr/bin/env bash
# Session 53, call 5 (~3 minutes on any GPU; carry .carry (the tree's build), .carry-s52 (2020856's), bench/.ab_pbench53b).
# (1) s53_call4.sh (persistent_bench: the staged stream alone; its prediction in its header).
# (2) Q4_K / Q5_K products with the scale and the min times their sums in integers: one int-to-float conversion each
# where two ran (the conversion pipe a quarter of the FMA rate; the Q4_K loops' I2F in PTX 17 -> 9 a round of 4 units at
# a row a warp, 33 -> 17 at two and in the gate/up). Prediction: logits bitwise equal (d sc and dmin mn exact in f32,
# sc S and mn A exact integers); decode the 8B +0-2% (T8 and REC), the 0.6B +0-1%; if ~0, the conversions are not
# what the GEMVs wait on either (call 1: the activations' sums, 8 dp4a, were not).
set -u
bash bench/calls/s53_call4.sh
. bench/calls/prelude.sh
OLD_CARRY=.carry-s52 . bench/calls/s45_sets.sh  # (REC, R06S; A = the old build, unpacked into /tmp/old)
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
echo "== llama-3.1-8b: a/b T8 (A 2020856, B the tree), c/d REC" | tee -a $OUT/ab.txt
KNOBS="$T8" KNOBS_A="$T8" KNOBS_C="$REC" KNOBS_D="$REC" LT_C=/tmp/old/lane-tune AB_SIDES="a b c d" TYPE=q4_k_m \
  ROUNDS=2 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 240 \
  bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
echo "== qwen3-0.6b R06S: A 2020856, B the tree" | tee -a $OUT/ab.txt
KNOBS="$R06S" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 120 \
  bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab qwen3-0.6b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
