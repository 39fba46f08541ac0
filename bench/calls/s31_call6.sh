#!/usr/bin/env bash
# Session 31, call 6 (~6 minutes, the budget's last; carry .carry and .llama/llama-bench.xz). #18's table is on Q8_0
# files: llama-3.1-8b Q8_0 side by side with llama-bench (bench/speed.sh, the record's set), last measured in session
# 27 (365 tok/s; #18 asks 480). (gemv_rows_q6_k left out: its domain is [0] where no matrix is Q6_K; the first run
# of this call stopped there). Prediction: decode ~375 tok/s (sessions 28-30's attention and evict-first changes,
# +2-3%), prefill(512) ~15,000.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
TYPE=q8_0 KNOB_SETS="$R" timeout 380 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed-8b-q8.txt 2>&1
echo "speed 8b q8_0 rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-8b-q8.txt | cut -c1-200 | head -22
