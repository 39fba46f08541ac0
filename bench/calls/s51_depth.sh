#!/usr/bin/env bash
# Prepared in session 50 (~7 minutes; carry .carry): #19's decode at depth 32k (0.63 of the bound on the H200, 0.8
# asked) after session 50's fold change (the step's own fold 48.0 -> 46.5 us at 32k / 32 splits in attention_bench,
# and 16 splits there at 42.4 us: fewer, longer blocks now beat 32 alone, where session 31's lanes had 32 ahead: 310 vs
# 275 tok/s). No code: knob sets the space holds, llama-3.1-8b Q4_K_M (bench/depth.sh, lanes of 33,024 positions): the
# record's depth set (32 splits, attn_fold_launch), the same with the step's own fold, and 16 splits with its own fold.
# Prediction: own fold at 32 splits 1.00-1.02x the record; 16 splits within 3% of 32 (the bench's 4 us a layer against
# the tail the lanes' other launches leave).
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"glu_stage":true,'
depth_run "${B}\"attn_fold_launch\":true,\"attn_splits\":32}"$'\n'"${B}\"attn_splits\":32}"$'\n'"${B}\"attn_splits\":16}"
