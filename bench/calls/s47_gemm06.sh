#!/usr/bin/env bash
# Session 47, prepared (~1 minute; no carry): qwen3-0.6b's Q4_K_M chunk GEMMs alone (bench/gemm_bench.cu's new 0.6b
# q4_k / q6_k shapes, 512 rows): why the lanes' wide tiles gave its prefill 1.009x where the Q8_0 bench gave its
# gate/up 1.33x. Prediction: gate+up Q4_K lk_gemm_w bn256 k64 (96 blocks) ~1.05-1.1x over lk_gemm_h 128 x 128 (192);
# bn128 k64 (192 blocks) faster than both if the 96 blocks starve the SMs. If bn128 k64 wins, half_gemm_shape's wide
# rule takes bn 128 where bn 256's tiles number fewer than the SMs.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a -o /tmp/gb bench/gemm_bench.cu || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for S in "0.6b gate+up 2x3072x1024 q4_k" "0.6b down 1024x3072 q6_k" "0.6b gate+up 2x3072x1024 q8_0"; do
  GB_SHAPE="$S" GB_ROWS=512 timeout 100 /tmp/gb 2>&1 | tee -a $OUT/gemm.txt
done
