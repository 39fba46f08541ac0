#!/usr/bin/env bash
# Prepared in session 40 (~7 minutes; carry .carry rebuilt at the tree): issue #14's qwen3-0.6b check, meant for the
# H200: the same command, 5 minutes, Q4_K_M; then the chosen configuration and the record's hand-picked set (session
# 38's, glu_groups with it) measured side by side as RESULTS.md measures (tune_h200.sh's HAND). Asked: the chosen at
# least as fast as the record. Prediction: decode within 2% of the hand-picked set, prefill(512) ahead.
set -u
. bench/calls/prelude.sh
export HAND='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true,"glu_groups":true}'
TYPE=q4_k_m tune_job 06b-q4km qwen3-0.6b 5m 420
sed -n '/as RESULTS.md measures/,$p' "$OUT/tune-06b-q4km.txt"
