#!/usr/bin/env bash
# Prepared in session 31 for the next GPU session (not run: the budget spent; ~3 minutes; carry .carry: this tree's
# build). gemv_short generalized: a plain decode GEMV whose rows are two units a lane (k up to 1,024 in Q8_0, 2,048 in
# a block format) takes lk_gemv's A 2 and twice its rows a warp (one unit: A 1 and 4x, as since session 27). On
# qwen3-0.6b Q8_0 that is its logits (151,936 rows of k 1,024: 52.7 us a step at 3.1 TB/s in session 31's profile,
# where gemv_short's domain was [false]). The same sums a row: logits bitwise equal to A's.
# Prediction: the logits 52.7 -> ~40 us, decode 1,710 -> ~1,750 tok/s (1.02-1.03x).
set -u
. bench/calls/prelude.sh
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
KNOBS_A="$S" KNOBS="${S/\"pdl_first\":true/\"pdl_first\":true,\"gemv_short\":true}" TYPE=q8_0 PREFILL=64 AB_DECODE_AT=5 \
  AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 |
  tee $OUT/ab-short2.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
