#!/usr/bin/env bash
# Session 13, call 2: gemm_half with the weights asked of L2 LK_GH_AHEAD stages ahead (0: none).
# (LK_GH_AHEAD and the prefetch it measured were reverted after this call: they changed nothing.)
cd "$(dirname "$0")/../.."
for a in 0 4 8; do
  nvcc -O3 -std=c++20 -arch=sm_90 -DLK_GH_AHEAD=$a -o /tmp/gemm_bench$a bench/gemm_bench.cu || exit 1
done
echo "== AHEAD 4"; /tmp/gemm_bench4 | tee $OUT/gemm-a4.txt
echo "== AHEAD 8"; /tmp/gemm_bench8 | grep half | tee $OUT/gemm-a8.txt
echo "== AHEAD 0"; /tmp/gemm_bench0 | grep half | tee $OUT/gemm-a0.txt
