#!/usr/bin/env bash
# Session 26, call 5 (~5 minutes; carry .carry: this tree's build, and .carry/a the build before the change).
# The GEMVs wait for the launch before them (pdl) in their first round only: the gemv_norm build of calls 2-3, whose
# hook did so, timed the record's set without gemv_norm 1,599-1,602 tok/s on the 0.6B where the builds before and after
# timed 1,491-1,497 (and the 8B 497.7 against 480.7): griddepcontrol.wait and launch_dependents each round cost.
# 1. Correctness as call 4. 2. Decode A/B (A: .carry/a = call 4's B, B: this build): qwen3-0.6b at 5-133, llama-3.1-8b.
# Prediction: verified, bitwise-equal logits; 0.6B 1,585 -> ~1,690 (+6-7%), 8B 488 -> ~503 (+3%).
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
verify_presets 60 "$S1"
echo "== 2. A/B"
for run in "qwen3-0.6b 5" "llama-3.1-8b 5"; do
  P=${run% *}; at=${run#* }
  TYPE=q4_k_m KNOBS="$B" PREFILL=64 AB_DECODE_AT=$at AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 \
    bash bench/ab_decode.sh $LA $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P-at$at.txt | grep -E "decode A|tokens" | cut -c1-200
done
D=/tmp/ab/qwen3-0.6b.ab-b
printf '128 %s\n' "$(python3 -c "import random; r=random.Random(7); print(' '.join(str(r.randrange(151000)) for _ in range(5)))")" > /tmp/ab/t.prompt
$D/lane /tmp/ab/qwen3-0.6b-q4_k_m.gguf $D/lane.sidecar --prompts /tmp/ab/t.prompt --profile > $OUT/profile-06.txt 2>&1
python3 bench/profile_table.py $OUT/profile-06.txt qwen3-0.6b decode $D/lane.json 2>&1 | head -14
