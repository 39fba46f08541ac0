#!/usr/bin/env bash
# Session 53, call 6 (s53_call5.sh reordered for a short device budget: the switch's A/Bs first, then s53_call4.sh;
# carry .carry and bench/.ab_pbench53b; predictions in s53_call5.sh's and s53_call4.sh's headers).
# (Ran in session 54 as s53_call6.sh: LK_K4_INT_SCALE 1.000x / 1.001x, bitwise equal; the switch is removed from
# the tree since 5696caf, so -DLK_K4_INT_SCALE=1 no longer changes a lane: kept as the record of the call.)
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh  # (REC, R06S)
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
echo "== llama-3.1-8b T8: B + LK_K4_INT_SCALE=1" | tee -a $OUT/ab.txt
KNOBS="$T8" NVFLAGS_B=-DLK_K4_INT_SCALE=1 TYPE=q4_k_m ROUNDS=2 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
echo "== qwen3-0.6b R06S: B + LK_K4_INT_SCALE=1" | tee -a $OUT/ab.txt
KNOBS="$R06S" NVFLAGS_B=-DLK_K4_INT_SCALE=1 TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  timeout 90 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
bash bench/calls/s53_call4.sh
