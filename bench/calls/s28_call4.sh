#!/usr/bin/env bash
# Session 28, call 4 (~7 minutes; carry .carry: this tree's build, .carry/a: call 3's, whose kernels are the session's
# start's). The decode step's attention (call 1's ablation: ~4.8 us a layer on both models) with two fewer memory round
# trips after its wait: the rope's constants at the position (the tables' cosines and sines, the q/k norms' weights)
# loaded before the wait, and the output's int8 copy for the o projection quantized from the merged values in shared
# memory rather than read back from global memory. And pdl_first, the knob built from call 1's LK_PDL_FIRST.
# 1. Correctness: `measure --verify` on qwen3-0.6b Q4_K_M (1 and 4 splits, prompts 5, 130, 700) and the tiny presets
#    (one set under pdl_first).
# 2. Decode A/B/C (3 rounds; the record's set): A .carry/a, B this build, C this build with pdl_first.
# Prediction: verified; B/A 0.6B +3-5%, 8B +1-2%, logits bitwise equal (the same values, the same codes); C/A on the
# 0.6B +6-8% (call 1: pdl_first alone +3.1%), on the 8B ~0.98.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
LA=/tmp/ca/lane-tune
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true}
S4=${S/\"attn_splits\":1/\"attn_splits\":4}
F=${S/\"pdl\":true/\"pdl\":true,\"pdl_first\":true}
echo "== 1. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130 700" 170 "$S" "$S4" "$F"
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"pdl":true,"pdl_first":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":1}'
S8='{"numerics":"int8x2","gemv_prequant":true,"pdl":true,"max_chunk":64,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
verify_presets 60 "$S1" "$S8"
echo "== 2. A/B/C"
for run in "qwen3-0.6b $S" "llama-3.1-8b $R"; do
  read -r P K <<< "$run"
  KNOBS="$K" KNOBS_C="${K/\"pdl\":true/\"pdl\":true,\"pdl_first\":true}" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 \
    AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 bash bench/ab_decode.sh $LA $L /tmp/ab $P 2>&1 |
    tee $OUT/ab-$P.txt | grep -E "decode A|tokens|FAIL" | cut -c1-220
done
