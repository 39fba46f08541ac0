#!/usr/bin/env bash
# Session 54, call 13 (~2.5 minutes on any GPU; carry .carry-b = the tree's build since 5696caf): fuse_qkv_mixed on
# the 0.6B now that the mixed launch's v rows take one a warp (80 registers, not 121). Session 29 measured it 0.988x
# on the 0.6B with the old rows. A: R06S (the 0.6B's record set); B: R06S with fuse_qkv_mixed.
# Prediction (H100): +1-3% (about half the 28 layers lose their v launch, ~2 us a boundary in a ~500 us step),
# logits bitwise equal (the same rows' sums in the same order).
set -u
CARRY=.carry-b . bench/calls/prelude.sh
. bench/calls/s45_sets.sh
R06SM=$(echo "$R06S" | sed 's/"fuse_qkv":true/"fuse_qkv":true,"fuse_qkv_mixed":true/')
echo "$R06SM"
KNOBS_A="$R06S" KNOBS="$R06SM" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | grep -E "====|BUILD_FAIL" | tee $OUT/ab06m.txt
