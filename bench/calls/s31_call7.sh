#!/usr/bin/env bash
# Session 31, call 7 (the budget's last minutes, the machine warm from call 6): qwen3-0.6b Q8_0 side by side (#18's
# table; session 27: 1,0xx). The record's small-model set without gemv_short (its domain is [false] on this file: a
# first run stopped there). Prediction: decode ~1,800 tok/s, prefill ~85,000.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
TYPE=q8_0 KNOB_SETS="$R" timeout 200 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b-q8.txt 2>&1
echo "speed 0.6b q8_0 rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-06b-q8.txt | cut -c1-200 | head -14
