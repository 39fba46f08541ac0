#!/usr/bin/env bash
# Session 26, call 4 (~8 minutes; carry .carry: this tree's build, and .carry/a the build before the change).
# The decode step's tensor-core attention without its two wasted loops (call 3's ncu: ~2,000 instructions a warp, of
# which ~210 zeroed the 14 query rows past the row's 2 heads and ~390 walked the merge over 16 rows for 2): the rows
# past the heads left unwritten (masked: they see no position), the merge over the block's rows only.
# 1. Correctness: `measure --verify` on qwen3-0.6b Q4_K_M (prompts 5, 130, 700) with 1 and 4 splits; tiny presets.
# 2. Decode A/B (A: .carry/a, B: this build; bench/ab_decode.sh, 3 rounds): qwen3-0.6b at positions 5-133 and
#    512-640, llama-3.1-8b at 5-133; the logits compared (the same numbers: bitwise).
# Prediction: verified; the attention 7.35 -> ~5.5 us a layer: 0.6B 1,600 -> ~1,700 (+5-7%), 8B 498 -> ~510 (+2%).
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
LA=/tmp/ca/lane-tune
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B4=${B/\"attn_splits\":1/\"attn_splits\":4}
echo "== 1. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130 700" 150 "$B" "$B4"
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"pdl":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":1}'
S4='{"numerics":"int8x2","gemv_prequant":true,"pdl":true,"max_chunk":16,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
verify_presets 100 "$S1" "$S4"
echo "== 2. A/B"
for run in "qwen3-0.6b 5" "qwen3-0.6b 512" "llama-3.1-8b 5"; do
  P=${run% *}; at=${run#* }
  TYPE=q4_k_m KNOBS="$B" PREFILL=64 AB_DECODE_AT=$at AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 \
    bash bench/ab_decode.sh $LA $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P-at$at.txt | grep -E "decode A|tokens" | cut -c1-200
done
D=/tmp/ab/qwen3-0.6b.ab-b
printf '128 %s\n' "$(python3 -c "import random; r=random.Random(7); print(' '.join(str(r.randrange(151000)) for _ in range(5)))")" > /tmp/ab/t.prompt
$D/lane /tmp/ab/qwen3-0.6b-q4_k_m.gguf $D/lane.sidecar --prompts /tmp/ab/t.prompt --profile > $OUT/profile-06.txt 2>&1
python3 bench/profile_table.py $OUT/profile-06.txt qwen3-0.6b decode $D/lane.json 2>&1 | head -14
