#!/usr/bin/env bash
# Session 26, call 2 (~8 minutes; carry .carry = this tree's build): gemv_norm, the decode step's add + norm and the
# gate/up product's quantize folded into the projections (their blocks norm and quantize the row into shared memory;
# o and down add into the residual).
# 1. Correctness: `measure --verify` (the CPU reference, --stagger) of the record's set with gemv_norm on qwen3-0.6b
#    Q4_K_M (prompts 5, 130, 700) and int8x2; verify_presets (tiny-qwen3, tiny-llama Q4_K_M, tiny-gpt-oss) with it.
# 2. Decode A/B (bench/ab_decode.sh, 3 rounds): the record against the record with gemv_norm, qwen3-0.6b and
#    llama-3.1-8b Q4_K_M at positions 5-133 (the 8B's FFN keeps its quantize: 14,336 values past a block's registers);
#    then the profile of the 0.6B's gemv_norm lane.
# 3. ncu on the 0.6B's step attention at depth 5 (the first call's regex matched nothing: the step's launches counted
#    past the 4-row chunk's 28).
# Predictions: verified everywhere; 0.6B 1,490 -> 1,650-1,750 (56 add_norm launches of 1.8 us and 28 quantizes of 1.0
# gone, each projection after a norm ~0.3-0.5 us longer); 8B 480 -> 490-505 (64 norms of 2.5 us gone, the row's 16 KB
# read by each of 768 and 1,792 blocks from L2 costing some of it).
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
N=${B/\"attn_splits\":1/\"attn_splits\":1,\"gemv_norm\":true}
N2=${N/\"numerics\":\"int8\"/\"numerics\":\"int8x2\"}
echo "== 1. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130 700" 150 "$N" "$N2"
G='{"numerics":"int8x2","gemv_prequant":true,"gemv_norm":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
verify_presets 100 "$N" "$G"
echo "== 2. A/B"
for P in qwen3-0.6b llama-3.1-8b; do
  TYPE=q4_k_m KNOBS_A="$B" KNOBS="$N" PREFILL=64 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 |
    tee $OUT/ab-$P.txt | grep -E "decode A|tokens|rel_l2" | cut -c1-220
done
D=/tmp/ab/qwen3-0.6b.ab-b
printf '128 %s\n' "$(python3 -c "import random; r=random.Random(7); print(' '.join(str(r.randrange(151000)) for _ in range(5)))")" > /tmp/ab/t.prompt
$D/lane /tmp/ab/qwen3-0.6b-q4_k_m.gguf $D/lane.sidecar --prompts /tmp/ab/t.prompt --profile > $OUT/profile-06-gemv_norm.txt 2>&1
python3 bench/profile_table.py $OUT/profile-06-gemv_norm.txt qwen3-0.6b decode $D/lane.json 2>&1 | head -16
echo "== 3. ncu"
TYPE=q4_k_m KNOBS="$B" DEPTH=5 SKIP=28 timeout 100 bash bench/ncu_kernels.sh $L /tmp/n5 qwen3-0.6b 'lk_attention_mma' 2 2>&1 |
  tee $OUT/ncu-attention.txt | tail -40
cp /tmp/n5/qwen3-0.6b.ncuk.err $OUT/ 2>/dev/null; head -c 3000 /tmp/n5/qwen3-0.6b.ncuk.txt > $OUT/ncuk-head.txt 2>/dev/null
