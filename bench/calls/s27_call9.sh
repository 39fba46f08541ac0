#!/usr/bin/env bash
# Session 27, call 9 (~4 minutes; carry .carry): #18's 8B goal on Q8_0 (call 7: 365 tok/s, 0.65 of the bound, with
# the Q4_K_M record's 1 row a warp): decode A/B/C on llama-3.1-8b Q8_0, A 1 row a warp, B 2 rows (the Q8_0 priors'
# choice), C 2 rows with gemv_split 2 off the fused launches' path (plain GEMVs split over 2 warps). 2 rounds.
# Prediction: B +3-6% (a Q8_0 row is 8 rounds of 16-byte units a lane: 2 rows double the bytes in flight a warp).
set -u
. bench/calls/prelude.sh
A='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B=${A/\"gemv_rows_per_warp\":1/\"gemv_rows_per_warp\":2}
C=${B/\"pdl\":true/\"pdl\":true,\"gemv_split\":2}
TYPE=q8_0 KNOBS_A="$A" KNOBS="$B" KNOBS_C="$C" PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5" ROUNDS=2 timeout 230 \
  bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-8b-q8.txt | grep -E "decode|tokens" | cut -c1-200
