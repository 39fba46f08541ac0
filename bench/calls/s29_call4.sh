#!/usr/bin/env bash
# Session 29, call 4 (~4 minutes; carry .carry: this tree's build, the weights' loads evict-first now every lane's).
# Where the step attention's microseconds go (call 2's marks: on the 0.6B the merge of 256 values took 1.1 us, the
# rope 0.7, two tiles 1.6): ncu's stall reasons on two of its decode launches of qwen3-0.6b Q4_K_M (layers 5-6 of the
# first step: 28 chunk launches before them), the caches kept between launches (NCU_CACHE=none), and one with ncu's
# flush; then the decode gate/up GEMV and the o GEMV the same way for comparison.
# Prediction: if instruction fetch is what the small kernels wait on, "no_instruction" is the first or second stall
# reason of the attention (>= 25% of its stalls) with the caches kept and more with the flush; else barrier and long
# scoreboard lead.
set -u
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
run() {  # tag regex skip count cache
  echo "== $1"
  KNOBS="$S" TYPE=q4_k_m SKIP=$3 NCU_CACHE=$5 NCU_LINES=120 timeout 150 bash bench/ncu_kernels.sh $L /tmp/nc qwen3-0.6b "$2" $4 |
    grep -vE "Block Limit|Theoretical|Driver Shared|Shared Memory Configuration" | tee $OUT/ncu-$1.txt | head -60
  cp /tmp/nc/qwen3-0.6b.ncuk.txt $OUT/ncu-$1.full.txt 2> /dev/null
}
run attn-kept lk_attention_mma 33 2 none
run attn-flushed lk_attention_mma 33 1 all
run glu-kept lk_gemv_glu 33 1 none
xz -9 $OUT/*.full.txt
