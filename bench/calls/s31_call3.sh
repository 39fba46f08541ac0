#!/usr/bin/env bash
# Session 31, call 3 (~5 minutes; carry .carry). Call 2 turned attention_bench's order over: in the lane 16 splits
# decoded at depth 32k at 275 tok/s against 32 splits' 310 (the bench: 16 splits 42.8 us a layer, 32 48.1).
# 1. 64 splits in the lane against 32 (the bench: 53.7 us). Prediction: within 2% of 32 (the lane's order is not the
#    bench's, so no sign predicted with confidence).
# 2. The timeline at depth 32k with 16 splits (session 30's call 6 has it with 32): where the lane's 16-split step
#    loses. Prediction: the attention's span longer than 32 splits' 45.5 us (its 128 blocks start later under the q/k/v
#    launch's tail: one block an SM needs every SM's slot free).
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":'
SETS="${B}32}"$'\n'"${B}64}"
TYPE=q4_k_m KNOB_SETS="$SETS" timeout 200 bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth.txt 2>&1
cut -c1-140 /tmp/d/depth.txt
mkdir -p /tmp/tl && ln -sf /tmp/d/llama-3.1-8b-q4_k_m.gguf /tmp/tl/llama-3.1-8b-q4_k_m.gguf
KNOBS="${B}16,\"context\":33024}" TL_PROMPT=32768 timeout 300 bash bench/timeline.sh $L /tmp/tl $OUT llama-3.1-8b
xz -9 $OUT/tl-*.txt
