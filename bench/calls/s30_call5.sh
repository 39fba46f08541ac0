#!/usr/bin/env bash
# Session 30, call 5 (~8 minutes; carry .carry: this tree's build, .llama/llama-bench.xz). bench/speed.sh side by side
# with llama-bench on both models with this session's step attention (8 warps) and fold. Prediction: qwen3-0.6b
# Q4_K_M decode ~1,950 tok/s (call 1: 1.016x of 1,920), llama-3.1-8b Q4_K_M ~533 (1.004x).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
TYPE=q4_k_m KNOB_SETS="$S" timeout 230 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b.txt 2>&1
echo "speed 0.6b rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-06b.txt | cut -c1-200 | head -22
TYPE=q4_k_m KNOB_SETS="$R" timeout 330 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed-8b.txt 2>&1
echo "speed 8b rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-8b.txt | cut -c1-200 | head -22
