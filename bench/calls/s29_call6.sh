#!/usr/bin/env bash
# Session 29, call 6 (~4 minutes; carry .carry: this tree's build, .carry/a: call 4's).
# 1. Which of call 5's two attention changes cost the 0.6B its 0.9% (the 8B gained 2.4%): decode A/B/C, 2 rounds, A
#    .carry/a, B this build (the rope's loads ahead, now bounded by the warp's own items: the 0.6B's warps have one,
#    and call 5 ran the other four turns' checks anyway; the merge's factors once a row), C B's with the merge as before
#    (-DLK_AM_MERGE_ONCE=0). Prediction: 0.6B B ~1.00, C ~1.00-1.01; 8B B ~1.024, C ~1.015.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
LA=/tmp/ca/lane-tune
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
echo "== 1. A/B/C"
for run in "qwen3-0.6b $S 110" "llama-3.1-8b $R 160"; do
  read -r P K T <<< "$run"
  KNOBS="$K" AB_SIDES="a b c" NVFLAGS_C=-DLK_AM_MERGE_ONCE=0 TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 \
    AB_PROMPT_LENS="5" ROUNDS=2 timeout $T bash bench/ab_decode.sh $LA $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt |
    grep -E "decode A|logits|FAIL" | cut -c1-200
done
