#!/usr/bin/env bash
# Session 21, call 3 (~7 minutes; carry .carry = HEAD without (c), i.e. call 2's REV build, and .llama/llama-bench.xz):
# the record side by side with llama-bench with session 20's later changes that held (the slabs' copy, one-split
# attention's copy, q and k fused beside a Q6_K v), on llama-3.1-8b and qwen3-0.6b Q4_K_M: the side-by-side set, and
# the same with one split (each checked against the reference first by speed.sh). Prediction from calls 1 and 2:
# 8B ~423 tok/s (4 splits) and ~433 (1 split); 0.6B ~1,280 and ~1,340; prefill(512) as session 20 (10,987 / 50,503)
# or a little faster with one split (call 1: +4% on the 8B).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256'
TYPE=q4_k_m KNOB_SETS="$B}
$B,\"attn_splits\":1}" timeout 400 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b qwen3-0.6b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; sed -n '/==== speed/,$p' $OUT/speed.txt | cut -c1-230 | tail -30
