#!/usr/bin/env bash
# Session 20, call 3 (~8 minutes; carry .carry, .llama/llama-bench.xz): call 2's kernels (the register-resident norm,
# the GEMVs' early weights) judged and timed for the record.
# (1) formats_check.sh's 11 sets on 5 types against the CPU reference (call 2's count read a verdict the measure table
#     no longer prints: "valid" is now "verified"/"screened"/"failed"). Prediction: 55 of 55 verified.
# (2) bench/speed.sh side by side with llama-bench on llama-3.1-8b and qwen3-0.6b Q4_K_M, the side-by-side set (each
#     checked against the reference first), the read-only rate measured in the run. Prediction (call 2's A/B): 8B ~423
#     tok/s (llama.cpp ~290), 0.6B ~1,270.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
TYPES="q4_k_m q4_k q6_k mxfp4 q8_0" LANE_TYPES="" SPEED_PRESETS="" timeout 240 bash bench/formats_check.sh $L /tmp/f > $OUT/formats.txt 2>&1
echo "formats rc=$?"; sed -n '/---- table/,$p' $OUT/formats.txt
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256}'
TYPE=q4_k_m KNOB_SETS="$B" timeout 320 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b qwen3-0.6b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; sed -n '/^read-only/,$p' $OUT/speed.txt | grep -v "^  " | cut -c1-230 | tail -40
