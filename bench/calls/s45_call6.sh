#!/usr/bin/env bash
# Session 45's last (~5 minutes; carry .carry (640258e's build) and .carry-old (71744cb's)), refused for lack of
# device time, so first next session: a chunk's f16 copies written by their producers (the norm's HALF form, the
# gate/up GEMM's yh) instead of lk_half_rows launches after them: the same values, so the logits must be bitwise equal
# to 71744cb's (verified in calls 3 and 5); then the new build judged by the CPU reference itself (the 8B's 3 layers:
# int8 chunks of 512 and 256, dequant over bf16). Prediction: prefill(512) 0.6B +2-3%, 8B +1-2%; decode unchanged.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
. bench/calls/s45_sets.sh
for P in qwen3-0.6b llama-3.1-8b; do
  K="$REC"; [ $P = qwen3-0.6b ] && K="$R06"
  TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_PROMPT_LENS="5 600" KNOBS="$K" timeout 150 bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab $P 2>&1 |
    grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
done
LAYERS=3 verify_real l8 llama-3.1-8b q4_k_m "700 300" 120 "$REC" "$X2" "$DQ"
