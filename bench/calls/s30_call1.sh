#!/usr/bin/env bash
# Session 30, call 1 (~6 minutes; carry .carry: this tree's build, .carry/a: session 29's last (HEAD 5ddee4a)).
# The decode step's attention at 8 warps a block (LK_AM_STEP_WARPS 8: 8 positions a warp of each 64-position tile, the
# values by k8 products; 128 registers, two blocks an SM) against 4 (16 positions a warp). Session 29's ncu: at 4 warps
# one warp a scheduler, each waiting on its own instructions' latency (~5 cycles an instruction).
# 1. attention_bench mmafold (no rope; llama-3.1-8b's heads) at 4 and 8 warps, every depth and split. Prediction: 8
#    warps faster at every depth, ~-20% at one tile (512, 1 split) and at depth 32k (32 splits 55 -> ~42 us).
# 2. Correctness: measure --verify on qwen3-0.6b Q4_K_M (prompts 5, 130, 700; 1 and 4 splits) and the tiny presets.
# 3. Decode A/B (3 rounds; the record's sets): A .carry/a, B this build. Prediction: 0.6B +4-6% (the attention 5.5 ->
#    ~4.5 us a layer), 8B +1.5-2.5% (its rope's 6 items one a warp).
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
LA=/tmp/ca/lane-tune
echo "== 1. attention_bench"
nvcc -O3 -std=c++17 -arch=sm_90 -DLK_AM_STEP_WARPS=4 -o /tmp/ab4 bench/attention_bench.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ab8 bench/attention_bench.cu &
wait
for w in 4 8; do timeout 60 /tmp/ab$w mmafold > $OUT/attn-w$w.txt 2>&1; done
paste <(awk '{print $1, $3, $4, $5, $7}' $OUT/attn-w4.txt) <(awk '{print $5, $7}' $OUT/attn-w8.txt) | column -t
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
S4=${S/\"attn_splits\":1/\"attn_splits\":4}
echo "== 2. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130 700" 170 "$S" "$S4"
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"pdl":true,"pdl_first":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":1}'
S8='{"numerics":"int8x2","gemv_prequant":true,"pdl":true,"max_chunk":64,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
verify_presets 60 "$S1" "$S8"
echo "== 3. A/B"
for run in "qwen3-0.6b $S" "llama-3.1-8b $R"; do
  read -r P K <<< "$run"
  KNOBS="$K" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 \
    bash bench/ab_decode.sh $LA $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|prefill|logits|tokens|FAIL" |
    cut -c1-200
done
