#!/usr/bin/env bash
# Session 46, call 4 (~4 minutes; no carry): the prefill's wgmma GEMM (lk_gemm_w, 8B prefill 265 TFLOPS on gate/up in
# call 2's profile) with wider instructions: LK_WG_N 64 (the lanes'), 128, 256 (one m64nNk16 for BN / N of the n64
# tiles, the same accumulators), and tiles of 256 activation rows by 64 of k (half the unpacking a product).
# Prediction: n128 / n256 5-15% faster at the same tile, bitwise the same outputs (the rel L2 column equal); BN 256
# faster again where its waves are whole.
set -u
export PATH=/usr/local/cuda/bin:$PATH
for n in 64 128 256; do
  nvcc -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a -DLK_WG_N=$n -o /tmp/gb$n bench/gemm_bench.cu &
done
wait
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for n in 64 128 256; do
  for S in gate+up "down 4096x14336 q4_k" "q    4096x4096 q4_k"; do
    GB_SHAPE="$S" GB_ROWS=512 timeout 100 /tmp/gb$n 2>&1 | grep -E "wgmma" | sed "s/^/n$n /" | tee -a $OUT/gemm.txt
  done
done
