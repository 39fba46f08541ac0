#!/usr/bin/env bash
# For the next GPU session (~7 minutes; carry .carry = this tree's build, .llama/llama-bench.xz): bench/speed.sh, the
# record's set side by side with llama-bench on llama-3.1-8b and qwen3-0.6b Q4_K_M, with session 26's build (the step
# attention without its wasted loops, one PDL wait a GEMV: A/B'd at 1.05x and 1.14x, not yet beside llama-bench).
# Prediction: 8B decode ~505 tok/s (llama.cpp ~271: ~1.86x), 0.6B ~1,700 (~743: ~2.3x); prefill(512) unchanged
# (~16,400 and ~84,300).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
TYPE=q4_k_m KNOB_SETS="$B" timeout 440 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b qwen3-0.6b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; sed -n '/==== speed/,$p' $OUT/speed.txt | cut -c1-250 | tail -40
