#!/usr/bin/env bash
# Session 47, call 1 (carry .carry, .carry-old, .carry-exp, .llama): on an H200, #16's last piece first (the real
# worker tuning llama-3.1-8b Q4_K_M, bench/calls/s41_call1.sh, ~6 minutes); on an H100, session 46's unrun A/B/C
# (bench/calls/s46_call5.sh, ~7 minutes; its predictions there).
set -u
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $G"
case "$G" in
  *H200*) bash bench/calls/s41_call1.sh ;;
  *) bash bench/calls/s46_call5.sh ;;
esac
