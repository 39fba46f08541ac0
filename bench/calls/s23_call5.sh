#!/usr/bin/env bash
# Session 23, call 5 (~5 minutes; carry .carry = this tree, .carry-old = call 4's build): the other block formats'
# decode GEMV loads (Q6_K, Q4_0, MXFP4 ..., lk_fmt::load) with call 3's constant-offset addresses (a round's units
# one address computation: the 256-block's index by shifts, the unit's offset split off). The 8B Q4_K_M reads its
# logits (430 MB), some down and v projections in Q6_K.
# 1. Correctness: bench/formats_check.sh sets 4 6 10 on q6_k, mxfp4, q4_0, q4_k_m against the CPU reference.
# 2. A/B (bench/ab_decode.sh) A call 4's build (the record's knobs with its knob attn_rope), B this tree (the record's
#    knobs: the decode step's rope in its attention is no knob now, fuse_rope_kv under attn_mma 2 does it).
#    Prediction: 8B +0.5-1.5%, 0.6B 0-1%; logits bitwise equal.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
SETS_ONLY="4 6 10" TYPES="q6_k mxfp4 q4_0 q4_k_m" LANE_TYPES=" " SPEED_PRESETS="" timeout 130 bash bench/formats_check.sh $L /tmp/f 2>&1 |
  tee $OUT/formats.txt | grep -v "^ " | head -8
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
BA=${B%\}},\"attn_rope\":true}
for P in llama-3.1-8b qwen3-0.6b; do
  TYPE=q4_k_m KNOBS="$B" KNOBS_A="$BA" PREFILL="5" timeout 140 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab $P 2>&1 |
    tee $OUT/ab-$P.txt | grep "===="
done
