#!/usr/bin/env bash
# Session 32, call 10 (~1.5 minutes; carry .carry): the staged pair (LK_GLU_SMX) on qwen3-0.6b Q4_K_M after call 7's
# fix (call 8 measured the 8B only: 1.019x). A the switch off, B on. Prediction: 1.00-1.01 (k 1,024).
set -u
. bench/calls/prelude.sh
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
KNOBS="$S" NVFLAGS_A="-DLK_GLU_SMX=0" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-06b.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
