#!/usr/bin/env bash
# Session 14, call 1 (~8 minutes; carry .carry): (1) bench/gemm_bench.cu with lk_gemm_h's BM 64 / BN 256 variants and
# the hoisted activation loads (compiled while the checkpoint trains); (2) gemm_half in the lane on the trained
# qwen3-0.6b: q8_0 under int8 (tiled GEMMs against gemm_half) and dequant with gemm_half; the f16 checkpoint under
# dequant with gemm_half (session 13's GEMV slabs: 468.6 ms for the 2,048-token prompt), all `measure --verify`.
set -u
. bench/calls/prelude.sh
(nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb bench/gemm_bench.cu > $OUT/gb-build.log 2>&1; echo "gemm_bench build rc=$?") &
GB=$!
. bench/calls/trained_qwen3.sh
wait $GB
timeout 90 /tmp/gb > $OUT/gemm.txt 2>&1; echo "gemm_bench rc=$?"
I='"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
D='"numerics":"dequant","max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
. bench/calls/measure_sets.sh
measure_sets 200 /tmp/w/q8.gguf q8 "{$I,\"gemm_prequant\":true,\"gemm_tile\":128}" "{$I,\"gemm_half\":true}" "{$D,\"gemm_half\":true}"
measure_sets 130 /tmp/w/q.gguf f16 "{$D,\"gemm_half\":true}"
measure_table
cat $OUT/gemm.txt
