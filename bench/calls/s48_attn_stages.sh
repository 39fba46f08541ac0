#!/usr/bin/env bash
# Session 48 (~1 minute; no carry; the binaries built on the CPU machine: bench/.ab_s{STAGES}_w{WARPS}, nvcc -O3
# -arch=sm_90 bench/attention_bench.cu -DLK_AM_STEP_STAGES=S -DLK_AM_STEP_WARPS=W): the decode step's attention
# (mmafold: the lane's attn_mma 2, folding its own splits) at depths 64 .. 32k and every split count, 8B shapes, with 3
# (today), 4 or 6 stages of 64 positions, and 4 warps of 16 positions a tile. Call 4 (the 0.6B on the default workload:
# decode at 512-640 positions 1,656 tok/s against 2,022 after a 5-token prompt) says the step's attention past a few
# tiles is latency-bound: a block's tile ~1 us with two in flight. Prediction: 6 stages 1.3-1.6x faster at 512-2,048
# positions with 1-4 splits, equal at 64 and at 32k with 32+ splits.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
for b in s3_w8 s4_w8 s6_w8 s3_w4; do
  echo "== $b"
  timeout 100 bench/.ab_$b mmafold 2>&1 | tee $OUT/attn-$b.txt | awk '$3 <= 8192'
done
