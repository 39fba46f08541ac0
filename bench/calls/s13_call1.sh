#!/usr/bin/env bash
# Session 13, call 1: the prefill GEMMs alone (bench/gemm_bench.cu): int8 tiled vs gemm_half, two occupancies.
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for b in 2 1; do
  nvcc -O3 -std=c++20 -arch=sm_90 -DLK_GH_BLOCKS=$b -o /tmp/gemm_bench$b bench/gemm_bench.cu || exit 1
done
echo "== LK_GH_BLOCKS 2"; /tmp/gemm_bench2 | tee $OUT/gemm-b2.txt
echo "== LK_GH_BLOCKS 1"; /tmp/gemm_bench1 | grep half | tee $OUT/gemm-b1.txt
