#!/usr/bin/env bash
# Session 30, call 7 (~5 minutes; carry .carry: this tree's build, .llama/llama-bench.xz). #19 side by side again with
# bench/depth.sh's decode now timed without --logits (call 6's timeline run, which passes none, decoded at 304 tok/s at
# depth 32k against depth.sh's 220-231: each step's logits copied back and waited for were inside the timing), the
# record's set with 32 splits, llama-bench's prefill and its tg128 at d32768 (f16 cache) beside it. Prediction: decode
# at 32k ~320-335 tok/s (~0.65 of the bound with the cache) against llama.cpp's ~178.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":32}'
TYPE=q4_k_m KNOB_SETS="$B" LLAMA_CACHES=f16 timeout 290 bash bench/depth.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b > $OUT/depth-full.txt 2>&1
echo "depth rc=$?"; cp /tmp/d/depth.txt $OUT/ 2>/dev/null; cut -c1-220 /tmp/d/depth.txt
