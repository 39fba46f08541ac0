#!/usr/bin/env bash
# Session 19, call 3 (~9 minutes; carry .carry, .llama/llama-bench.xz): (1) the new moe_tile knob in a lane:
# gpt-oss-20b MXFP4 (random weights: timing only) under the chunks-of-512 set with tiles of 64 and of 128 pairs (the
# rule's choice at 512 rows: 128; moe_gemm_bench's glu 624 against 515 us a layer predicts ~+2.5 ms of prefill for 64);
# (2) #19: llama-3.1-8b Q4_K_M at depth 32k and prefill(8192) with gemm_half beside session 12's best, side by side with
# llama-bench (s15_call1.sh's depth part, never run).
set -u
. bench/calls/moe_prelude.sh
MOE_SETS=("${MOE_512%\}},\"moe_tile\":64}" "${MOE_512%\}},\"moe_tile\":128}")
NO_LLAMA=1 moe gpt-oss-20b mxfp4
B='{"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
H="$B,\"gemm_half\":true,\"kv_cache\":\"f16\",\"attn_mma\":2"
TYPE=q4_k_m KNOB_SETS="$B,\"gemm_prequant\":true,\"gemm_tile\":128,\"kv_cache\":\"f16\",\"attn_mma\":2,\"attn_splits\":32}
$H,\"attn_splits\":32}" timeout 360 bash bench/depth.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b > $OUT/depth.txt 2>&1
echo "depth rc=$?"; sed -n '/==== depth/,$p' $OUT/depth.txt | tail -20
