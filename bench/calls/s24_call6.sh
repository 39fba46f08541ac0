#!/usr/bin/env bash
# Session 24, call 6 (~5 minutes; carry .carry = this tree, .carry-old = 29ff937's build): lk_gemm_w in the lane
# (half_gemm_shape's rule: sm_90 builds as sm_90a; GEMMs of 512+ rows with n and k >= 4,096 on wgmma). llama-3.1-8b
# Q4_K_M, prefill of 512 tokens: A the old build with the record's set (chunks of 256), B this build with chunks of 512
# (q, o, gate/up and down on lk_gemm_w), C the old build with chunks of 512 (lk_gemm_h). Prediction (gemm_bench's
# per-layer sums): B/A 1.25-1.35x (44.8 -> ~34 ms), C/A 1.05-1.1x; logits of B and C against A within ~1e-4, tokens equal.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
B512=${B/\"max_chunk\":256/\"max_chunk\":512}
TYPE=q4_k_m KNOBS_A="$B" KNOBS="$B512" KNOBS_C="$B512" LT_C=/tmp/o/lane-tune PREFILL="512" timeout 420 \
  bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-8b.txt | grep "===="
grep -c "lk_gemm_w<" /tmp/ab/llama-3.1-8b.ab-b/*.cu 2>/dev/null | head -3
