#!/usr/bin/env bash
# Session 46, call 3 (~5 minutes; carry .carry (the step attention's merge with 2 barriers fewer, its o copy quantized
# in registers) and .carry-old (71406d5's build)). The same numbers, so the logits must be bitwise equal.
# Prediction: the step attention 5.8 -> ~5.2 us on the 0.6B (decode +2-3%), the 8B +0.5-1%. C on the 0.6B: gemv_short
# on the record (the logits' 151,936 Q6_K rows of k 1,024: 68.5 us in call 2, ~41 at the H100's rate): +4-5%.
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
R06S=${R06%\}},\"gemv_short\":true}
for P in qwen3-0.6b llama-3.1-8b; do
  K="$REC"; C=""; [ $P = qwen3-0.6b ] && K="$R06" && C="$R06S"
  KNOBS_C="$C" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_PROMPT_LENS="5 300 700" KNOBS="$K" timeout 200 \
    bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab $P 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
done
KNOBS="$R06" timeout 100 bash bench/timeline.sh $L /tmp/tl $OUT qwen3-0.6b 2>&1 | grep -E "lk_attention_mma|step"
