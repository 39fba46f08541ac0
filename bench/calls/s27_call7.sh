#!/usr/bin/env bash
# Session 27, call 7 (~6 minutes; carry .carry, .llama/llama-bench.xz):
# 1. #19 side by side: bench/depth.sh with the 32-split set (call 6: 213.5 tok/s at depth 32k against llama.cpp's
#    177.8) and llama-bench's pp8192 and pp32768 (depth 0) and tg128 at depth 32768 (f16 cache) in the same run.
# 2. #18's 8B decode goal was stated on Q8_0 (480 tok/s): bench/speed.sh on llama-3.1-8b Q8_0 with the record's set
#    (gemv_rows_q6_k has no Q6_K there: left out), llama-bench beside it.
# Predictions: prefill(8192) ~14,000 against llama.cpp's ~9,400, prefill(32768) ~3.5 s against ~4.2 s; 8B Q8_0 decode
# ~380 tok/s (0.70 of its bound) against llama.cpp's ~255.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":32}'
TYPE=q4_k_m KNOB_SETS="$B" LLAMA_CACHES=f16 timeout 240 bash bench/depth.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b > $OUT/depth-full.txt 2>&1
echo "depth rc=$?"; cp /tmp/d/depth.txt $OUT/ 2>/dev/null; cut -c1-220 /tmp/d/depth.txt
rm -rf /tmp/d
Q=${B/,\"gemv_rows_q6_k\":2/}
Q=${Q/\"attn_splits\":32/\"attn_splits\":1}
TYPE=q8_0 KNOB_SETS="$Q" timeout 230 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed-8b-q8.txt 2>&1
echo "speed rc=$?"; sed -n '/==== speed/,/bound/p' $OUT/speed-8b-q8.txt | cut -c1-200; grep -E "^\| llama" $OUT/speed-8b-q8.txt
