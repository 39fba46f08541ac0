#!/usr/bin/env bash
# Session 29, call 10 (~4 minutes, the budget's last; carry .carry: this tree's build). gemv_quant_in, a knob built
# after call 2's chain_bench (a launch boundary ~0.8-1.0 us) and timeline (the GLU output's quantize launch 1.1 us a
# layer on the 0.6B, 3.1 on the 8B): the down projection quantizes its input itself, each block into its shared memory
# after its wait (lk_gemv_qin), no quantize launch. Decode A/B, one build, the record's sets without and with it, 2
# rounds, logits compared: the same integers and sums, so bitwise equal (which also carries A's verification over).
# Prediction: 0.6B +3-5% (28 launches of ~1.1 us less; each down block's copy ~0.3 us more after its wait); 8B -2 to
# +2% (its 512 down blocks each read 57 KB of f32 from L2 and quantize 14,336 values: ~1-2 us after the wait, against
# the 3.1 us launch saved).
set -u
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
Q='"gemv_prequant":true,"gemv_quant_in":true'
for run in "qwen3-0.6b $S 110" "llama-3.1-8b $R 150"; do
  read -r P K T <<< "$run"
  KNOBS_A="$K" KNOBS="${K/\"gemv_prequant\":true/$Q}" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5" \
    ROUNDS=2 timeout $T bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt |
    grep -E "decode A|logits|FAIL" | cut -c1-200
done
