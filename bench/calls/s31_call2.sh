#!/usr/bin/env bash
# Session 31, call 2 (~6 minutes; carry .carry). #19 in the lane: the record's long-context set at 32 splits (the
# prior since session 30) against 16 and 8, decode at depth 32k (bench/depth.sh, timed without --logits), the 32-split
# set twice for the spread. attention_bench (call 1) put the step attention at 32k at 42.8 us a layer with 16 splits
# (one block an SM) against 48.1 with 32 and 68.4 with 8; at 8k 18.1 / 20.0 / 23.9. Prediction: 16 splits decode at
# 32k +4-5% over 32 (~5 us of ~100 a layer), 8 splits -15%.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":'
SETS="${B}32}"$'\n'"${B}16}"$'\n'"${B}8}"$'\n'"${B}32,\"cuda_graphs\":true}"
TYPE=q4_k_m KNOB_SETS="$SETS" timeout 540 bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth.txt 2>&1
cp /tmp/d/depth.txt $OUT/depth-table.txt 2>/dev/null
cat /tmp/d/depth.txt
