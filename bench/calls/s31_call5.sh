#!/usr/bin/env bash
# Session 31, call 5 (~5 minutes; carry .carry: this tree's build). glu_quant, a knob built this session: the decode
# step's fused gate/up GEMV writes its output's int8 copy itself (lk_gemv_glu_q: clusters of 4 blocks of 8 rows, one
# 32-block of the output each; the rows' values put into the cluster's first block's shared memory through distributed
# shared memory, its first warp quantizes them after the cluster's barrier), so the quantize launch before the down
# projection (and its boundary) is gone. Session 21's count-and-fence and session 29's gemv_quant_in (the same launch
# folded other ways) lost. The same codes and scales as the quantize launch: logits bitwise equal to A's (which
# carries A's verification over), and the plan model matches without it (ctest).
# Decode A/B, one build, the record's sets without and with it, 3 rounds, logits compared.
# Prediction: 0.6B +3-5% (28 launches of ~1.5 us span less, minus a cluster barrier at each GLU block's end), 8B +2-4%
# (32 x ~3.5 us of a 1.87 ms step, minus the same).
set -u
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
Q='"gemv_prequant":true,"glu_quant":true'
for run in "qwen3-0.6b $S 130" "llama-3.1-8b $R 170"; do
  read -r P K T <<< "$run"
  KNOBS_A="$K" KNOBS="${K/\"gemv_prequant\":true/$Q}" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
    ROUNDS=3 timeout $T bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt |
    grep -E "decode A|logits|FAIL|rror" | cut -c1-200
done
