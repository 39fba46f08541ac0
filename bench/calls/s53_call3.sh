#!/usr/bin/env bash
# Session 53, call 3 (~6 minutes on any GPU, ~8 with WITH_06=1; carry .carry (the tree's build), .carry-s52
# (2020856's: session 52's final), bench/.ab_pbench53).
# (1) persistent_bench's staged form (new): a decode step's Q4_K GEMVs in one persistent kernel of one block an SM,
# each warp's rows streamed into shared memory by the bulk copy engine NS chunks ahead of its sums, across the GEMVs
# and the grid barriers between them. Prediction (H200; the H100 ~1.45x the times): launched ~1,500-1,700 us a step
# for the 8B's 3.9 GB; staged with the barriers 1,000-1,200; without them 950-1,100; outputs equal bit for bit.
# (2) The activations' sums of a 32-group computed once for every row that multiplies it (lk_fmt::sums: the rows a
# warp, the fused gate/up's two matrices; the gate/up's words read once for both). PTX of the loops: Q4_K at 2 rows a
# warp 858 -> 818 instructions, Q6_K at 2 rows 979 -> 939, the gate/up 904 -> 852 (staged 909 -> 869); 1 row a warp
# unchanged. Prediction: logits bitwise equal; the 8B +0.5-1.5% with session 50's H200 set (T8: 1 row a warp, only
# the gate/up and Q6_K's 2 rows change) and +1-2% with REC (2 rows a warp everywhere); the 0.6B (R06S) +0-1%.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
[ -x bench/.ab_pbench53 ] && timeout 150 bench/.ab_pbench53 2>&1 | tee $OUT/pbench.txt
. bench/calls/prelude.sh
OLD_CARRY=.carry-s52 . bench/calls/s45_sets.sh  # (REC, R06S; A = the old build, unpacked into /tmp/old)
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
echo "== llama-3.1-8b: a/b T8 (A 2020856, B the tree), c/d REC" | tee -a $OUT/ab.txt
KNOBS="$T8" KNOBS_A="$T8" KNOBS_C="$REC" KNOBS_D="$REC" LT_C=/tmp/old/lane-tune AB_SIDES="a b c d" TYPE=q4_k_m \
  ROUNDS=2 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 300 \
  bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" |
  tee -a $OUT/ab.txt
[ "${WITH_06:-0}" = 1 ] || exit 0  # (the 0.6B only where the device time allows: WITH_06=1)
echo "== qwen3-0.6b R06S: A 2020856, B the tree" | tee -a $OUT/ab.txt
KNOBS="$R06S" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 130 \
  bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab qwen3-0.6b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
