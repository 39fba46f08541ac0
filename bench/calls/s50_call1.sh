#!/usr/bin/env bash
# Session 50, call 1 (carry .carry, .carry-old, bench/.ab_attn_old, bench/.ab_attn_new): on an H200, #16's real-worker
# tuning of llama-3.1-8b Q4_K_M (bench/calls/s41_call1.sh, ~6 minutes; its prediction there); on any other GPU, this
# session's call 2 (bench/calls/s50_call2.sh, ~8 minutes: the step attention's fold A/B; its prediction there).
set -u
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $G"
case "$G" in
  *H200*) bash bench/calls/s41_call1.sh ;;
  *) bash bench/calls/s50_call2.sh ;;
esac
