#!/usr/bin/env bash
# Session 37's second call (~5 minutes; carry .carry rebuilt with the lk_xq fix): call 1 found every measure --verify
# lane with gemv_prequant refused by the resident host (its lk_xq parameter laid out from 3 of the struct's 5 fields:
# 16 bytes of 32, since session 36 added norm_fold's two). With every field named: (1) the forms verified by the CPU
# reference on tiny-llama Q4_K_M (a plain gemv_prequant set, norm_fold, norm_fold_groups, glu_groups, int8x2);
# (2) glu_groups alone on qwen3-0.6b Q4_K_M (A the record's set, B + glu_groups), medians of 3.
# Prediction: all verified; B +3-5% (call 1: glu_groups over norm_fold_groups +4.7%).
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
P='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true}'
F="${P/\"gemv_prequant\":true/\"gemv_prequant\":true,\"norm_fold\":true}"
G="${F/\"norm_fold\":true/\"norm_fold\":true,\"norm_fold_groups\":true}"
U="${P/\"fuse_glu\":true/\"fuse_glu\":true,\"glu_groups\":true}"
VERIFY_PRESETS="tiny-llama:q4_k_m" verify_presets 150 "$P" "$F" "$G" "$U" "${U/\"int8\"/\"int8x2\"}"
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
KNOBS_A="$S" KNOBS="${S%\}},\"glu_groups\":true}" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  ROUNDS=3 timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab-g6 qwen3-0.6b > $OUT/ab-glu-06b.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-glu-06b.txt | cut -c1-200
