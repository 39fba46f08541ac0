#!/usr/bin/env bash
# Session 20, call 4 (~6 minutes; carry .carry, .llama/llama-bench.xz): #19's decode at depth 32k with call 2's kernels
# (session 19: 194 tok/s against llama.cpp's 178.6, 0.38 of the bound), the side-by-side set with chunks of 512, and
# llama-bench's tg128 at depth 32768 (f16 cache) in the same run. Prediction: ~215 tok/s (the weights' part of the
# step ~0.4 ms shorter; attention unchanged).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":32}'
TYPE=q4_k_m KNOB_SETS="$B" LLAMA_DECODE_ONLY=1 LLAMA_CACHES=f16 timeout 380 bash bench/depth.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b 2>&1 | tee $OUT/depth.txt | sed -n '/==== depth/,$p' | cut -c1-260
