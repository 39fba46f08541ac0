#!/usr/bin/env bash
# Session 48 (~2 minutes; no carry; binaries built on the CPU machine: bench/.ab_k{KEYS}_s{STAGES}, nvcc -O3 -arch=sm_90
# bench/attention_bench.cu -DLK_AM_STEP_KEYS=K -DLK_AM_STEP_STAGES=S): the step attention's tile of 64 positions (8 a
# warp) against 128 (16 a warp: the same barriers, softmax and rescaling a tile for twice the positions), 2 or 3
# stages. Call 5 showed a tile ~0.95 us whatever the stages (3, 4, 6): the loop's own latency, not memory's.
# Prediction: 128 positions a tile 1.5-1.8x faster a position at depth 512-8,192 with few splits; equal at 64. Then ncu's
# warp states of the 64-key kernel at depth 2,048, one split (where a tile's time goes).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
for b in k64_s3 k128_s2 k128_s3; do
  echo "== $b"
  timeout 100 bench/.ab_$b mmafold 2>&1 | tee $OUT/attn-$b.txt | awk '$3 <= 8192'
done
for b in k64_s3 k128_s2; do
  timeout 120 /usr/local/cuda/bin/ncu --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    -k regex:lk_attention_mma -c 1 bench/.ab_$b mmafold 2048 1 > $OUT/ncu-$b.txt 2>&1
  grep -E "Stall|Warp Cycles|Issued|Eligible|Active Warps|No Eligible|Executed Ipc|Duration" $OUT/ncu-$b.txt | head -40
done
