#!/usr/bin/env bash
# Session 48, call 8 (~6 minutes; carry .carry-old = 0a959d7's build (A) and .carry = the tree's (B); the git-ignored
# bench/.ab_k64_s3 (A) and bench/.ab_skip (B) attention_bench builds, carried too where this machine has them). Two
# changes:
# 1. The attention tile loop's rescale of its sums skipped where no row's factor changes them (every factor 1, or
#    nothing weighed yet): B must give the same numbers: the lanes' logits bitwise equal to A's on the R06 set (one
#    split, which change 2 leaves alone; the 8B's REC set has 16 splits: change 2 moves its numbers). Prediction:
#    attention_bench mmafold -5-10% at depth 512-8,192 with few splits, ~-3% at 64; decode after 5 tokens +1-2% (0.6B).
#    AB_RUNS=qwen3-0.6b:5 by default; qwen3-0.6b:512 and llama-3.1-8b:5 ~2 minutes more each.
# 2. The step's own fold spread over its splits only past 4 tiles of positions (LK_AM_FOLD_TILES): the tuner's 0.6B set
#    (16 splits) A/B by -DLK_AM_FOLD_TILES=0 on the tree's build, then judged by the CPU reference. Prediction: +4-7%
#    after 5 tokens (the spans of 65-133 positions no longer folded), verified.
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
mkdir -p /tmp/old && tar xJf .carry-old/bundle.tar.xz -C /tmp/old
nvidia-smi --query-gpu=name --format=csv,noheader
# (the two attention_bench builds are untracked files of the CPU machine's tree: where they are missing, the lanes'
# A/B below still tells)
[ -x bench/.ab_k64_s3 ] && [ -x bench/.ab_skip ] || echo "no attention_bench builds (bench/.ab_k64_s3, bench/.ab_skip)"
for b in k64_s3 skip; do
  [ -x bench/.ab_$b ] && timeout 100 bench/.ab_$b mmafold > $OUT/attn-$b.txt 2>&1
done
[ -s $OUT/attn-skip.txt ] && paste $OUT/attn-k64_s3.txt $OUT/attn-skip.txt | awk 'NR > 1 {printf "depth %5d splits %2d  A %7.2f us  B %7.2f us  B/A %.3f  diff %s %s\n", $3, $4, $5, $13, $13 / $5, $8, $16}'
ab_records ${AB_RUNS:-qwen3-0.6b:5}
# The step's own fold spread only past 4 tiles of positions (kernels/shapes.cuh's LK_AM_FOLD_TILES): the tuner's 0.6B
# set (16 splits, call 3), A with the old rule (-DLK_AM_FOLD_TILES=0) against B, both the tree's build; then the set
# judged by the CPU reference with decode steps short of and past the rule (prompts of 100, 200, 300).
T06="${R06S%\}},\"attn_splits\":16,\"gemv_rows_q6_k\":2}"
echo "== qwen3-0.6b, the tuner's set: A the old fold rule, B the tree's"
NVFLAGS_A='-DLK_AM_FOLD_TILES=0' TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 100" KNOBS="$T06" \
  timeout 170 bash bench/ab_decode.sh $L $L /tmp/ab2 qwen3-0.6b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
. bench/calls/verify_presets.sh
LAYERS=2 verify_real fold06 qwen3-0.6b q4_k_m "100 200 300" 100 "$T06"

