#!/usr/bin/env bash
# Session 32, call 9 (the budget's last ~4 minutes; carry .carry and .llama): qwen3-0.6b Q4_K_M side by side with
# llama-bench (bench/speed.sh), the record's small-model set, at this tree (the Q6_K/Q5 layouts, the staged pair).
# Prediction: decode ~2,050 tok/s (call 4's A/B 2,042), prefill ~90,000.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
TYPE=q4_k_m KNOB_SETS="$S" timeout 230 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b-q4km.txt 2>&1
echo "speed 0.6b q4_k_m rc=$?"; grep -E "tok/s|pp512|tg128|bound" $OUT/speed-06b-q4km.txt | cut -c1-200 | head -8
