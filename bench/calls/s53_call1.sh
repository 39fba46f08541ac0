#!/usr/bin/env bash
# Session 53, call 1 (carry .carry, bench/.ab_gemv52). On an H200: the 8B side by side (s51_call1.sh, ~9 minutes;
# its predictions in its header). On any other GPU: s52_call6.sh (~2 minutes; its predictions in its header).
set -u
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $G"
case "$G" in
  *H200*) bash bench/calls/s51_call1.sh ;;
  *) bash bench/calls/s52_call6.sh ;;
esac
