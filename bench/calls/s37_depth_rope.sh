#!/usr/bin/env bash
# Prepared in session 37 (~6 minutes; carry .carry): #19's decode at depth 32k (0.63 of the bound, 0.8 asked) with the
# rope where the tuner can already put it. At 32 splits each of the attention's ~248 blocks ropes its query heads (and
# the block holding the position its key) before it streams: ~2 us of a block's ~40 (session 29's marks: the 8B's rope
# 2.1 us); the tail behind the mean block is ~9 us (session 30), which more, smaller blocks than slots would let the
# hardware balance, but 64 splits lost (302.7 against 319.6: each block's prologue paid twice over two waves).
# fuse_rope ropes once, in the q/k/v projection's last block, so the attention's blocks start streaming at once.
# No code: knob sets the space holds, on llama-3.1-8b Q4_K_M (bench/depth.sh, lanes of 33,024 positions): the
# record's depth set (32 splits, attn_fold_launch), + fuse_rope, and 64 splits + fuse_rope.
# Prediction: + fuse_rope at 32 splits ~1.00x (the qkv launch's serial tail ~ the rope the blocks no longer do); at 64
# splits + fuse_rope +2-4% over the record (the second wave without a rope, the tail balanced by the hardware).
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"glu_stage":true,"attn_fold_launch":true,"attn_splits":'
SETS="${B}32}"$'\n'"${B}32,\"fuse_rope\":true}"$'\n'"${B}64,\"fuse_rope\":true}"
TYPE=q4_k_m SHORT=512 KNOB_SETS="$SETS" timeout 420 bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth.txt 2>&1
echo "depth rc=$?"; cut -c1-160 /tmp/d/depth.txt
