#!/usr/bin/env bash
# Session 51, call 2 (~8 minutes; carry .carry = the tree's build, bench/.ab_brief0/1/2/4 = attention_bench built with
# -DLK_AM_BRIEF_TILES=0/1/2/4). The step attention's brief form (kernels/shapes.cuh LK_AM_BRIEF_TILES, default 2): a
# block of at most 2 tiles has warps 0-3 each score all 64 positions of a tile and sum a quarter of the value columns,
# so there are no ways to merge (the merge's barriers and passes over shared memory). Prediction: attention_bench
# (8B shapes, one split) at depths 5-127 -1.0 to -2.0 us a layer (of ~6-8), 512 unchanged (past the rule); the
# 0.6B's decode after 5 tokens (positions 5-133: 1-2 tiles) +6-12%, the 8B's +2-4%; verified by the CPU reference (new
# numbers: the softmax's max over the tile, not a way's; tokens and logits within the int8 bound). BRIEF_AB_8B=1 adds
# the 8B's A/B. (Run on an H100, raw bench/runs/2026-12-07-s51-call2/: the brief form lost everywhere and was
# reverted; its kernel is in no commit, so this script now only documents what ran.)
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
nvidia-smi --query-gpu=name --format=csv,noheader
for v in 0 1 2 4; do
  [ -x bench/.ab_brief$v ] || continue
  for d in 5 64 127 512; do timeout 60 bench/.ab_brief$v mmafold $d 1; done > $OUT/attn-brief$v.txt 2>&1
done
paste $OUT/attn-brief0.txt $OUT/attn-brief1.txt $OUT/attn-brief2.txt $OUT/attn-brief4.txt | grep -v kernel |
  awk '{printf "depth %5d splits %2d  brief0 %6.2f  brief1 %6.2f  brief2 %6.2f  brief4 %6.2f us  diffs %s %s %s %s\n", $3, $4, $5, $13, $21, $29, $8, $16, $24, $32}' | tee $OUT/attn.txt
T06="${R06S%\}},\"attn_splits\":16,\"gemv_rows_q6_k\":2}"
echo "== qwen3-0.6b R06S decode after 5: A brief 0, B brief 2 (the tree), C brief 4"
NVFLAGS_A='-DLK_AM_BRIEF_TILES=0' NVFLAGS_C='-DLK_AM_BRIEF_TILES=4' AB_SIDES="a b c" TYPE=q4_k_m ROUNDS=3 PREFILL=512 \
  AB_DECODE_AT=5 AB_PROMPT_LENS="5 100" KNOBS="$R06S" timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab1 qwen3-0.6b 2>&1 |
  grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
. bench/calls/verify_presets.sh
LAYERS=2 verify_real brief06 qwen3-0.6b q4_k_m "5 40 100 300" 150 "$R06S" "$T06"
verify_presets 150 "$R06S"
if [ -n "${BRIEF_AB_8B:-}" ]; then
  echo "== llama-3.1-8b REC decode after 5: A brief 0, B brief 2"
  NVFLAGS_A='-DLK_AM_BRIEF_TILES=0' TYPE=q4_k_m ROUNDS=2 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 100" KNOBS="$REC" \
    timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab2 llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
  LAYERS=2 verify_real brief8 llama-3.1-8b q4_k_m "5 100" 100 "$REC"
fi
