#!/usr/bin/env bash
# Session 13, call 3: gemm_half with stage kt's products beside stage kt + 1's unpacking (one barrier a stage).
cd "$(dirname "$0")/../.."
for b in 2 1; do nvcc -O3 -std=c++20 -arch=sm_90 -DLK_GH_BLOCKS=$b -o /tmp/gemm_bench$b bench/gemm_bench.cu || exit 1; done
echo "== BLOCKS 2"; /tmp/gemm_bench2 | tee $OUT/gemm-b2.txt
echo "== BLOCKS 1"; /tmp/gemm_bench1 | grep half | tee $OUT/gemm-b1.txt
