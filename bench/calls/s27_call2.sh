#!/usr/bin/env bash
# Session 27, call 2 (~7 minutes; carry .carry = this tree's build, .llama/llama-bench.xz): bench/speed.sh, the
# record's set side by side with llama-bench on llama-3.1-8b and qwen3-0.6b Q4_K_M (the 0.6B's with gemv_short: call
# 1's A/B 1.032x; the 8B has no matrix of one round, its domain is false alone), with sessions 26-27's kernels.
# Prediction: 8B decode ~505 tok/s (llama.cpp ~271: ~1.86x), 0.6B ~1,760 (~743: ~2.37x); prefill(512) unchanged
# (~16,400 and ~84,300).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${B/\"pdl\":true/\"pdl\":true,\"gemv_short\":true}
TYPE=q4_k_m KNOB_SETS="$B" timeout 300 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed-8b.txt 2>&1
echo "speed 8b rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-8b.txt | cut -c1-250 | tail -12
TYPE=q4_k_m KNOB_SETS="$S" timeout 240 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06.txt 2>&1
echo "speed 0.6b rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-06.txt | cut -c1-250 | tail -12
