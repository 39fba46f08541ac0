#!/usr/bin/env bash
# Session 51, call 1 (carry .carry, bench/.ab_gemv). On an H200 (~9 minutes): the 8B side by side with llama-bench
# (bench/calls/s44_side.sh with s51_sets8b.txt: the record's hand set and session 50's tuning choice). Prediction:
# decode 540-555 tok/s (0.56 of the bound), ~2.0x llama.cpp's tg128 (~270); prefill(512) ~18,500, ~2.0x pp512.
# On any other GPU (~3 minutes): every decode GEMV shape of bench/gemv_bench.cu alone (s49_call2.sh's first half).
set -u
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $G"
case "$G" in
  *H200*) SETS_FILE=bench/calls/s51_sets8b.txt SPEED_TIMEOUT=420 bash bench/calls/s44_side.sh ;;
  *) . bench/calls/prelude.sh; [ -x bench/.ab_gemv ] && timeout 240 bench/.ab_gemv 2>&1 | tee $OUT/gemv.txt | tail -60 ;;
esac
