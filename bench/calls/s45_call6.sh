#!/usr/bin/env bash
# Session 45 (~3 minutes, what the budget leaves; carry .carry (this tree) and .carry-old (71744cb)): a chunk's f16
# copies written by their producers (the norm's HALF form, the gate/up GEMM's yh) instead of lk_half_rows launches
# after them: the same values, so the logits must be bitwise equal to 71744cb's (verified in calls 3 and 5).
# Prediction: prefill(512) 0.6B +2-3%, 8B +1-2%; decode unchanged.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/old /tmp/ab && tar xJf .carry-old/bundle.tar.xz -C /tmp/old
REC='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"pdl_first":true,"fuse_glu":true,"fuse_qkv":true,"fuse_qkv_mixed":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":16,"gemv_rows_per_warp":2,"gemv_rows_q6_k":2,"gemv_split":2,"gemv_warps":4}'
R06='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"pdl_first":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1,"glu_groups":true}'
for P in qwen3-0.6b llama-3.1-8b; do
  K="$REC"; [ $P = qwen3-0.6b ] && K="$R06"
  TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_PROMPT_LENS="5 600" KNOBS="$K" timeout 150 bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab $P 2>&1 |
    grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
done
