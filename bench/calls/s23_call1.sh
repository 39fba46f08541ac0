#!/usr/bin/env bash
# For the next GPU session (~4 minutes; carry .carry = this tree, .llama/llama-bench.xz): #18's load after the
# repacking's 64-bit word form (kernels/host_memory.cuh; 5x its GB/s on this machine's 2 cores, bench/NOTES.md
# "session 22"): bench/load.sh on llama-3.1-8b Q4_K_M, side by side with llama-bench. Prediction: the lane's load to
# its first token 0.857 s (session 20) -> 0.70-0.80 s, llama-bench ~0.85 s; then bench/repack_bench.cu on the machine's
# 16 cores (prediction: Q4_K and Q6_K past 20 GB/s with the staging reused).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
TYPE=q4_k_m KNOBS="$B" timeout 240 bash bench/load.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b 2>&1 | tee $OUT/load.txt | tail -5
nvcc -O3 -std=c++17 -o /tmp/repack_bench bench/repack_bench.cu && timeout 120 /tmp/repack_bench 1024 | tee $OUT/repack.txt
