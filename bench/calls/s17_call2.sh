#!/usr/bin/env bash
# For the next GPU session, call 2 (~4 minutes; carry .carry): (1) bench/persistent_bench.cu, the persistent decode's
# question before it is built (#16, #18): a step's GEMVs (8B and 0.6B shapes, Q4_K) launched one by one in a graph
# under pdl, the same launches over a persistent grid (the control), one cooperative kernel walking them with grid
# barriers (with and without an L2 prefetch of each warp's next row before the barrier), and the barriers alone.
# (2) Where qwen3-30b-a3b's prefill goes now (#17; 0.92x llama.cpp in session 16's refused lane): its first 8 layers
# profiled under the chunks-of-512 set (bench/profile_best.sh: the decode step's and the largest chunk's launches).
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/pb bench/persistent_bench.cu && timeout 200 /tmp/pb | tee $OUT/persistent.txt
. bench/calls/prelude.sh
A='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512}'
LAYERS=8 TYPE=q8_0 timeout 150 bash bench/profile_best.sh $L /tmp/pq qwen3-30b-a3b "$A" > $OUT/profile-q30.txt 2>&1
echo "profile rc=$?"; cut -c1-200 $OUT/profile-q30.txt
