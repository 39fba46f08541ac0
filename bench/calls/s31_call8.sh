#!/usr/bin/env bash
# Session 31, call 8 (~3 minutes, the budget's last; no carry). The Q4_K decode GEMVs with their round's weights
# staged by cp.async into each lane's own shared-memory slots instead of registers (gemv_bench's bv_cp_q4k: the same
# loads, shares and sums, so the library's results bit for bit): no register holds a weight in flight, so a launch
# keeps more warps an SM. On the Q8_0 files the 8B decodes at 0.70 of the bound where its Q4_K_M file reaches 0.54:
# the Q4_K GEMVs (the library's gate/up at 80 registers, 3 blocks an SM) are latency-bound, not short of bytes.
# Prediction: the gate/up pair at 5 blocks an SM (46 registers) ~10-15% under the library's; the plain GEMVs (48 / 40
# registers at 4 / 6 blocks) 5-10% under lib rpw1 on gate and down; "equal" everywhere.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb bench/gemv_bench.cu || exit 1
timeout 200 /tmp/gb "lib rpw1,cp minb" > $OUT/gemv_bench.txt 2>&1
cat $OUT/gemv_bench.txt
