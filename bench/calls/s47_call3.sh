#!/usr/bin/env bash
# Session 47, call 3 (carry .carry, .llama): on an H200, #16's real-worker tuning of llama-3.1-8b Q4_K_M
# (bench/calls/s41_call1.sh, ~6 minutes); on an H100, qwen3-0.6b Q4_K_M side by side with llama-bench
# (bench/calls/s44_side.sh with the 0.6B's record set, R06 + gemv_short; ~6 minutes with llama-bench's build).
# Prediction (H100): decode ~2,000 tok/s, prefill(512) ~99,000 (call 1's B), llama.cpp ~? (not measured on the H100
# since session 44).
set -u
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $G"
case "$G" in
  *H200*) bash bench/calls/s41_call1.sh ;;
  *)
    R06=$(grep "^R06=" bench/calls/s45_sets.sh | sed "s/^R06='//; s/'$//")
    echo "${R06%\}},\"gemv_short\":true}" > /tmp/r06s.sets
    PRESETS=qwen3-0.6b SETS_FILE=/tmp/r06s.sets SPEED_TIMEOUT=300 bash bench/calls/s44_side.sh
    ;;
esac
