#!/usr/bin/env bash
# Session 25, call 5 (~3 minutes, the device time's rest; carry .carry = call 4's build): llama-3.1-8b Q4_K_M's
# decode at positions 512-640, the record's set with 1 split against 8 (the attention folding its splits of whole
# tiles). Prediction (the 0.6B's 1.29x there; the 8B's attention is ~11% of its step at short rows, 4 query heads a
# block): 1.12-1.2x.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B8=${B/\"attn_splits\":1/\"attn_splits\":8}
TYPE=q4_k_m KNOBS_A="$B" KNOBS="$B8" PREFILL="64" AB_DECODE_AT=512 AB_PROMPT_LENS="5" ROUNDS=2 \
  timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-8b-at512.txt | grep "===="
