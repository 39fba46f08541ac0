#!/usr/bin/env bash
# Session 27, call 6 (~8 minutes; carry .carry, .llama/llama-bench.xz): #19's decode at depth 32k with the straight
# tile copies (call 4: the decode step's attention at 32k 1.25x with 16 splits, ~1.0x with 32: 16 splits now the
# faster, 45 against 54 us a layer), the record's set with 16 and with 32 splits (session 20: 201.6 tok/s with 32, 0.39
# of the bound), and llama-bench's tg128 at depth 32768 (f16 cache) in the same run.
# Prediction: 16 splits ~215 tok/s (attention ~9 us a layer shorter: ~0.3 ms a step), 32 splits ~202.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":16}'
B32=${B/\"attn_splits\":16/\"attn_splits\":32}
TYPE=q4_k_m KNOB_SETS="$B"$'\n'"$B32" LLAMA_DECODE_ONLY=1 LLAMA_CACHES=f16 timeout 520 bash bench/depth.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b > $OUT/depth-full.txt 2>&1
echo "depth rc=$?"; cp /tmp/d/depth.txt $OUT/ 2>/dev/null; cut -c1-300 /tmp/d/depth.txt
