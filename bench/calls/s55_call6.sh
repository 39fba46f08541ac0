#!/usr/bin/env bash
# Session 55, call 6 (~3 minutes on any GPU; carry .carry): s55_call4.sh's first A/B alone (the budget after the
# refused starts): the 8B Q4_K_M with T8, A the tree, B the norms letting the next launch start before their wait
# (LK_PDL_FIRST 4) alone, two rounds (no C: the quantize). Prediction in s55_call3.sh.
set -u
. bench/calls/prelude.sh
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
KNOBS="$T8" NVFLAGS_B=-DLK_PDL_FIRST=4 AB_SIDES="a b" TYPE=q4_k_m ROUNDS=2 \
  PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 230 \
  bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee $OUT/ab-pdl.txt
