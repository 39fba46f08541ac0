#!/usr/bin/env bash
# Session 48, call 8 (~3 minutes, AB_RUNS=qwen3-0.6b:5 by default; qwen3-0.6b:512 and llama-3.1-8b:5
# ~2 minutes more each); carry .carry-old = 0a959d7's build (A), .carry = the tree's (B: the attention tile
# loop's rescale of its sums skipped where no row's factor changes them: every factor 1, or nothing weighed yet);
# bench/.ab_k64_s3 (A) and bench/.ab_skip (B) attention_bench builds). B must give the same numbers: the lanes' logits
# bitwise equal to A's. Prediction: the step attention's tile ~20% cheaper where the warps' maxima settle (depth), the
# first tile always: attention_bench mmafold -5-10% at depth 512-8,192 with few splits, ~-3% at 64; decode after 5 tokens
# +1-2% (0.6B), ~+0.5% (8B); after 512 tokens +2-3% (0.6B).
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
R06S=${R06%\}},\"gemv_short\":true}
for run in ${AB_RUNS:-qwen3-0.6b:5}; do
  set -- ${run/:/ }
  K="$REC"; [ $1 = qwen3-0.6b ] && K="$R06S"
  echo "== $1 decode after $2"
  TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=$2 AB_PROMPT_LENS="5 600" KNOBS="$K" timeout 170 \
    bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab $1 2>&1 | grep -E "====|BUILD_FAIL|rel|decode|equal" | tail -8 | tee -a $OUT/ab.txt
done
