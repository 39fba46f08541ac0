#!/usr/bin/env bash
# Session 38, call 3 (~4 minutes; carry .carry and .llama): qwen3-0.6b Q8_0 side by side with llama-bench (#18's
# table is on Q8_0 files), session 31's record set with glu_groups (call 1: 1.060x over it, logits bitwise equal).
# Prediction: decode ~1.06x session 31's ratio over llama.cpp; prefill unchanged.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R8='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_groups":true}'
TYPE=q8_0 KNOB_SETS="$R8" timeout 230 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b-q8.txt 2>&1
echo "speed 0.6b q8_0 rc=$?"; grep -E "tok/s|pp512|tg128|bound|^  " $OUT/speed-06b-q8.txt | cut -c1-200 | head -24
