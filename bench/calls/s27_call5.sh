#!/usr/bin/env bash
# Session 27, call 5 (~8 minutes; carry .carry: this tree's build, .carry/a the build before the fast copies: call 1's,
# with gemv_short). The tensor-core attention's whole tiles by straight copies (lk_am_copy_tile; call 4 in
# attention_bench: the decode step 1.27x at depth 512 with one split, 1.36-1.55x at 2k-32k with 1-8 splits, ~1.0x at 32
# splits; the same outputs).
# 1. Correctness: `measure --verify` on qwen3-0.6b Q4_K_M with 1 and 4 splits (prompts 5, 130, 700: the 700 a chunk of
#    512 through the chunk attention), the tiny presets.
# 2. Decode A/B (A: .carry/a, B: this build; 3 rounds): qwen3-0.6b at positions 5-133 and 512-640 (the record + gemv_short),
#    llama-3.1-8b at 5-133 (the record); the logits compared (the same numbers: bitwise).
# Prediction: verified; 0.6B at 5-133 +1-3% (one to three tiles, the first two staged before the wait), at 512-640
# +8-12% (attention 18 -> ~14 us a layer); 8B +1-2%.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
LA=/tmp/ca/lane-tune
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${B/\"pdl\":true/\"pdl\":true,\"gemv_short\":true}
S4=${S/\"attn_splits\":1/\"attn_splits\":4}
echo "== 1. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130 700" 170 "$S" "$S4"
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"pdl":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":1}'
S8='{"numerics":"int8x2","gemv_prequant":true,"pdl":true,"max_chunk":64,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
verify_presets 60 "$S1" "$S8"
echo "== 2. A/B"
for run in "qwen3-0.6b 5 $S" "qwen3-0.6b 512 $S" "llama-3.1-8b 5 $B"; do
  read -r P at K <<< "$run"
  TYPE=q4_k_m KNOBS="$K" PREFILL=64 AB_DECODE_AT=$at AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 170 \
    bash bench/ab_decode.sh $LA $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P-at$at.txt | grep -E "decode A|tokens" | cut -c1-200
done
