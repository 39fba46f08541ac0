#!/usr/bin/env bash
# Session 14, call 2 (~7 minutes; carry .carry and .llama/llama-bench.xz): (1) bench/gemm_bench.cu at 256 rows with
# lk_gemm_h split along k (the lanes' choice marked *, then splits 1-8 forced), the 8B's and qwen3-0.6b's shapes;
# (2) llama-3.1-8b Q4_K_M side by side with llama-bench (bench/speed.sh): the int8 tiled lane against gemm_half's
# (64x128 blocks, the small grids split), each checked against the reference and under --stagger first.
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb bench/gemm_bench.cu > $OUT/gb-build.log 2>&1; echo "gemm_bench build rc=$?"
GB_ROWS=256 timeout 100 /tmp/gb > $OUT/gemm.txt 2>&1; echo "gemm_bench rc=$?"
B='{"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
TYPE=q4_k_m KNOB_SETS="$B,\"gemm_prequant\":true,\"gemm_tile\":128}
$B,\"gemm_half\":true}
$B,\"gemm_half\":true,\"kv_cache\":\"f16\",\"attn_mma\":2}" timeout 420 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; tail -12 $OUT/speed.txt
cat $OUT/gemm.txt
