#!/usr/bin/env bash
# Session 56, call 1 (~6 minutes on any GPU; carry .carry): LK_GEMV_L2_PREFETCH, a decode GEMV's warp asking the
# first N bytes of its rows' codes into L2 (one cp.async.bulk.prefetch.L2) before its first round, so that the
# weights stream on while a block that came early under PDL waits on the launch before.
# On the 8B Q4_K_M under T8: B 4096 bytes a warp, C the rows' whole span (at most ~14 KB a warp: the Q6_K down at two
# rows a warp), D C with the norms' early trigger (LK_PDL_FIRST=4, +0.6% in this session's first call). Then the 8B Q8_0
# (s51_sets8b.txt line 1) with C. Prediction (revised before the run: a round of LK_GEMV_AHEAD 4 units a lane is
# 128 units, so at k 4096 the first round already asks a Q4_K row's whole codes; only the down's 14,336-wide rows, 7 KB
# of codes and 3.5 KB of high bits, have more to ask): Q4_K_M B/C +0.3-1% (the down alone), D about C + 0.6%;
# Q8_0 (a round is half its 4 KB rows) B (the whole span) +1-2%; logits bitwise equal.
# Ran in session 56 (bench/NOTES.md; B 0.978x, C 0.951x): LK_GEMV_L2_PREFETCH is removed since; repeat it from
# commit ee5ff66's kernels.
set -u
. bench/calls/prelude.sh
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
echo "== 8B Q4_K_M T8: B 4096, C whole span, D C + LK_PDL_FIRST=4"
KNOBS="$T8" NVFLAGS_B=-DLK_GEMV_L2_PREFETCH=4096 NVFLAGS_C=-DLK_GEMV_L2_PREFETCH=1048576 \
  NVFLAGS_D="-DLK_GEMV_L2_PREFETCH=1048576 -DLK_PDL_FIRST=4" AB_SIDES="a b c d" \
  TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 240 \
  bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee $OUT/ab-q4.txt
echo "== 8B Q8_0: B whole span"
KNOBS="$(sed -n 1p bench/calls/s51_sets8b.txt)" NVFLAGS_B=-DLK_GEMV_L2_PREFETCH=1048576 \
  TYPE=q8_0 ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 200 \
  bash bench/ab_decode.sh $L $L /tmp/ab8 llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee $OUT/ab-q8.txt
