#!/usr/bin/env bash
# Session 53, call 4 (~2 minutes on any GPU; carry bench/.ab_pbench53b = persistent_bench at the tree). Call 1's staged
# form lost (the H100: 8B 2,024-2,228 us a step with the barriers against 1,568 launched; 1,528 without barriers):
# is the limit its sums at 8-12 warps an SM or the bulk copies' stream? New rows: "stream only" (the chunks waited
# for and dropped, no sums) with and without the barriers, and the sums at 12 warps without barriers.
# Prediction (H100): stream only without barriers 1,300-1,350 us (2.9-3.0 TB/s: the stream is not the limit, the
# sums are); with the barriers ~1,550 (each barrier's ~2 us partly under the ring); staged 12w without barriers ~1,450.
set -u
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
[ -x bench/.ab_pbench53b ] && timeout 150 bench/.ab_pbench53b 2>&1 | tee $OUT/pbench.txt
