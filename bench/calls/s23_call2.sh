#!/usr/bin/env bash
# Session 23, call 2 (~8 minutes; carry .carry = this tree, .carry-old = bf03330): the decode step's attention
# (#18: call 1's profile of the 0.6B put attention at 6.4 us a layer and rope at 2.7, 35% of the step):
# (E) lk_attention_mma's step asks its first tiles of the positions before the step's before its PDL wait (the
#     launch before it is rope's; those rows were cached by earlier steps), the step's own rows after it;
# (R) knob attn_rope: the decode step's rope, per-head norm and cache append done by the attention blocks (each ropes
#     its query heads; the block whose split holds the position ropes the key head into the cache and its stage).
# 1. Correctness: `lane-tune measure --verify` (the CPU reference: tokens, logits within the numerics' bound, --stagger
#    bit for bit) on tiny-qwen3 (NeoX + the per-head norm), tiny-llama q4_k_m (adjacent pairs) and tiny-gpt-oss
#    (sinks, a sliding window, YaRN), prompts of 200 tokens (the position's tile past the stages asked early).
# 2. A/B/C (bench/ab_decode.sh): A bf03330, B this tree (E), C this tree with attn_rope (E + R), the record's knobs,
#    8B and 0.6B Q4_K_M. Predictions: B/A 0.6B +4-8%, 8B +2-4%; C/A 0.6B +12-20%, 8B +5-8%; logits bitwise equal.
# (Run as it was at 792a61b: attn_rope was a knob until 6a84974, which folds rope so under fuse_rope_kv and attn_mma 2.)
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":1,"max_chunk":64,"attn_rope":true}'
S2='{"numerics":"dequant","fuse_rope_kv":true,"pdl":true,"kv_cache":"bf16","attn_mma":2,"attn_splits":4,"max_chunk":16,"attn_rope":true}'
S3='{"numerics":"dequant","fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":2,"max_chunk":16}'
S4='{"numerics":"dequant","kv_cache":"f16","attn_mma":2,"attn_splits":1,"max_chunk":4,"pdl":true}'
verify_presets 150 "$S1" "$S2" "$S3" "$S4"
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
C=${B%\}},\"attn_rope\":true}
for P in qwen3-0.6b llama-3.1-8b; do
  TYPE=q4_k_m KNOBS="$B" KNOBS_C="$C" PREFILL="5" timeout 200 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab $P 2>&1 |
    tee $OUT/abc-$P.txt | grep "===="
done
