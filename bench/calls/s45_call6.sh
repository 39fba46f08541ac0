#!/usr/bin/env bash
# Session 45 (~3 minutes, what the budget leaves; carry .carry (this tree) and .carry-old (71744cb)): a chunk's f16
# copies written by their producers (the norm's HALF form, the gate/up GEMM's yh) instead of lk_half_rows launches
# after them: the same values, so the logits must be bitwise equal to 71744cb's (verified in calls 3 and 5).
# Prediction: prefill(512) 0.6B +2-3%, 8B +1-2%; decode unchanged.
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
for P in qwen3-0.6b llama-3.1-8b; do
  K="$REC"; [ $P = qwen3-0.6b ] && K="$R06"
  TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_PROMPT_LENS="5 600" KNOBS="$K" timeout 150 bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab $P 2>&1 |
    grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
done
