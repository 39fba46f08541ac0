#!/usr/bin/env bash
# For the next GPU session (~6 minutes; carry .carry): #19's decode at depth 32k (session 19: 187-194 tok/s, 0.37-0.38
# of the bound counting the cache's 4.3 GB a token) by the positions' splits: 32 against 64 (512 blocks over the 8
# key/value heads instead of 256: more bytes in flight), chunks of 512. Prediction: 64 splits ~+10% at depth.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512'
TYPE=q4_k_m KNOB_SETS="$B,\"attn_splits\":32}
$B,\"attn_splits\":64}" timeout 500 bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth.txt 2>&1
echo "depth rc=$?"; sed -n '/==== depth/,$p' $OUT/depth.txt | cut -c1-220
