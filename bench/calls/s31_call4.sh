#!/usr/bin/env bash
# Session 31, call 4 (~4 minutes; carry .carry: a build whose attn_splits domain also holds 33 and 48, for this
# measurement only). Call 3's timeline with 16 splits: the step attention's blocks (one an SM) finish their tiles at
# 47.0 us mean, 51.5 the latest; with 32 (session 30) 30.4 / 39.7 (248 blocks, 16 SMs with one). The tail is the
# loss at 32 splits. 33 splits make 264 blocks, two on every SM (32 parts of 16 tiles and one of a tile a head).
# Prediction: 33 +2-4% over 32 (the tail 9 -> ~5 us a layer); 48 (384 blocks, 11 tiles) below 32.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":'
SETS="${B}32}"$'\n'"${B}33}"$'\n'"${B}48}"$'\n'"${B}33,\"cuda_graphs\":true}"$'\n'"${B}32,\"cuda_graphs\":true}"
TYPE=q4_k_m KNOB_SETS="$SETS" timeout 400 bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth.txt 2>&1
cut -c1-150 /tmp/d/depth.txt
