#!/usr/bin/env bash
# Session 37, for a short device budget (~8 minutes; carry .carry): s37_norm_fold_lane.sh and s37_norm_fold_ab.sh cut
# to one call: the forms verified by the CPU reference on tiny-llama Q4_K_M only (norm_fold, norm_fold_groups,
# glu_groups beside them; int8 and int8x2), then decode A/B/C on llama-3.1-8b Q4_K_M and A/C/D on qwen3-0.6b Q4_K_M
# (medians of 2 rounds). Predictions as in those scripts.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
F='{"numerics":"int8","gemv_prequant":true,"norm_fold":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true}'
G="${F/\"norm_fold\":true/\"norm_fold\":true,\"norm_fold_groups\":true}"
U="${G/\"fuse_glu\":true/\"fuse_glu\":true,\"glu_groups\":true}"
VERIFY_PRESETS="tiny-llama:q4_k_m" verify_presets 110 "$F" "$G" "$U" "${U/\"int8\"/\"int8x2\"}"
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
p() { echo "${1%\}},\"norm_fold\":true}"; }
g() { echo "${1%\}},\"norm_fold\":true,\"norm_fold_groups\":true}"; }
KNOBS_A="$R" KNOBS="$(p "$R")" KNOBS_C="$(g "$R")" TYPE=q4_k_m PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  ROUNDS=2 timeout 220 bash bench/ab_decode.sh $L $L /tmp/ab-f llama-3.1-8b > $OUT/ab-fold-8b.txt 2>&1
grep -E "decode A|prefill|logits|FAIL|rror" $OUT/ab-fold-8b.txt | cut -c1-200
KNOBS_A="$S" KNOBS="$(g "$S")" KNOBS_C="$(g "$S" | sed 's/}$/,"glu_groups":true}/')" TYPE=q4_k_m PREFILL=64 \
  AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=2 timeout 140 bash bench/ab_decode.sh $L $L /tmp/ab-f6 qwen3-0.6b \
  > $OUT/ab-fold-06b.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-fold-06b.txt | cut -c1-200
