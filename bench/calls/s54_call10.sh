#!/usr/bin/env bash
# Session 54, call 10 (~4 minutes on any GPU; carry .carry = 60ac644's build and .carry-b = the build under test, which
# became the tree at 5696caf; outcome +2.0%, bitwise equal: bench/NOTES.md "session 54"):
# the 8B T8 lane with the mixed q/k/v launch's Q6_K v rows one a warp (B) against two (A, T8's gemv_rows_q6_k). ncu
# (call 9): the mixed launch holds 124 registers for all its warps (13.7 an SM), the Q4_K q/k rows alone 55.
# Prediction (H100): B ~74 registers, 24 warps; decode +1-2% (the mixed launch in ~half the layers, ~2-3 us each),
# logits bitwise equal (a row's sums in the same order at one or two rows a warp).
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/cb && tar xJf .carry-b/bundle.tar.xz -C /tmp/cb
. bench/calls/s45_sets.sh
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
KNOBS="$T8" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  timeout 280 bash bench/ab_decode.sh $L /tmp/cb/lane-tune /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" |
  tee $OUT/ab.txt
