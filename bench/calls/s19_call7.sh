#!/usr/bin/env bash
# Session 19, call 7 (~2 minutes; carry .carry, .llama/llama-bench.xz): bench/load.sh again on llama-3.1-8b Q4_K_M with
# the pipelined load, now also with the lane's kernels loaded lazily (CUDA_MODULE_LOADING=LAZY; the lane loads all at
# start). Prediction: lazy saves ~0.05-0.15 s of a 1.42 s load.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2'
TYPE=q4_k_m RUNS=5 KNOBS="$B,\"max_chunk\":256}" timeout 200 bash bench/load.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b 2>&1 | tee $OUT/load.txt | tail -7
