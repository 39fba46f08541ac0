#!/usr/bin/env bash
# For the next GPU session (~7 minutes; carry .carry = this tree's build, .llama/llama-bench.xz): the record side by
# side with llama-bench (bench/speed.sh, each set checked against the CPU reference first) with the record's set at
# chunks of 512 (session 24: the 8B's large chunk GEMMs on lk_gemm_w, prefill(512) 15,517 tok/s against llama.cpp's
# 9,561 in an A/B; speed.sh's full record not yet run). Prediction: 8B decode ~480, prefill(512) ~15,500 (1.55-1.7x);
# 0.6B decode ~1,450-1,500, prefill(512) ~50,000-55,000 (one chunk instead of two; its GEMMs stay on lk_gemm_h).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
TYPE=q4_k_m KNOB_SETS="${B}" timeout 420 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b qwen3-0.6b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; sed -n '/==== speed/,$p' $OUT/speed.txt | cut -c1-230 | tail -30
