#!/usr/bin/env bash
# For the next GPU session (~6 minutes; carry .carry = this tree, .carry-old = 29ff937's build, session 23's record):
# the decode step's int8 copy of the attention's output from registers (kernels/norm.cuh lk_quantize_lane: a warp's 32
# lanes hold one 32-block of the output in order, so each quantizes its value after a warp's max by shuffles), in the
# tensor-core step attention's merge, lk_attention's and lk_attention_lanes' merge and the fold: no barrier, no read
# back of the output from global memory (session 23: the step attention ~6-7 us a layer, its fixed part unexplained).
# 1. Correctness: `lane-tune measure --verify` on tiny-qwen3, tiny-llama q4_k_m and tiny-gpt-oss (sinks, a sliding
#    window) with gemv_prequant under attn_mma 2 (one split and 4: the fold's copy), lk_attention (one split) and
#    attn_lanes (one split); the copy's numbers are lk_i8_quad's, so every set as before.
# 2. A/B/C (bench/ab_decode.sh): A 29ff937, B this tree, session 23's record set, both models. Prediction: 0.6B +3-5%,
#    8B +1-2%; logits bitwise equal. C: B with fuse_norm (the add + norm after the o and down projections done by
#    their last block: 56 launches a step fewer on the 0.6B; session 14 measured it slower on the 8B, before
#    gemv_prequant and the norm in registers). Prediction: 0.6B +0-5%, 8B -2-0%.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":1,"max_chunk":64}'
S2='{"numerics":"int8x2","gemv_prequant":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"bf16","attn_mma":2,"attn_splits":4,"max_chunk":16}'
S3='{"numerics":"int8","gemv_prequant":true,"fuse_rope_kv":true,"pdl":true,"attn_splits":1,"max_chunk":16}'
S4='{"numerics":"int8","gemv_prequant":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_lanes":true,"attn_splits":1,"max_chunk":16}'
verify_presets 150 "$S1" "$S2" "$S3" "$S4"
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
for P in qwen3-0.6b llama-3.1-8b; do
  TYPE=q4_k_m KNOBS="$B" KNOBS_C="${B%\}},\"fuse_norm\":true}" PREFILL="5" timeout 200 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab $P 2>&1 |
    tee $OUT/ab-$P.txt | grep "===="
done
