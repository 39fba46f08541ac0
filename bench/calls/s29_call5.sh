#!/usr/bin/env bash
# Session 29, call 5 (~5 minutes; carry .carry: this tree's build, .carry/a: call 4's, the weights evict-first in both).
# The step attention with fewer instructions after its wait (call 4's ncu: ~5 cycles an issued instruction, one warp a
# scheduler: the launch is its instructions' latency): (1) the merge computes each row's max, factors and sum once,
# not once a value (0.6B: 1.1 us of 5.8 in call 2's marks); (2) a warp's rope items all loaded before any is roped
# (the 8B's warps 0-1 have two items: two L2 round trips one after the other; its rope 2.3 us).
# 1. Correctness: measure --verify on qwen3-0.6b Q4_K_M (prompts 5, 130, 700; 1 and 4 splits) and the tiny presets
#    (tiny-qwen3 NeoX + norm, tiny-llama Q4_K_M, tiny-gpt-oss sinks + window + head 64).
# 2. Decode A/B (3 rounds; the record's sets): A .carry/a, B this build. Prediction: 0.6B +4-6% (~1 us of ~19 a
#    layer), 8B +2-3% (merge ~1.5 us, rope ~1 us of ~61 a layer); logits bitwise equal (the same sums in the same order).
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
LA=/tmp/ca/lane-tune
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
S4=${S/\"attn_splits\":1/\"attn_splits\":4}
echo "== 1. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130 700" 170 "$S" "$S4"
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"pdl":true,"pdl_first":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":1}'
S8='{"numerics":"int8x2","gemv_prequant":true,"pdl":true,"max_chunk":64,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
verify_presets 60 "$S1" "$S8"
echo "== 2. A/B"
for run in "qwen3-0.6b $S" "llama-3.1-8b $R"; do
  read -r P K <<< "$run"
  KNOBS="$K" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 \
    bash bench/ab_decode.sh $LA $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|prefill|logits|tokens|FAIL" |
    cut -c1-200
done
