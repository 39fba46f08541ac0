#!/usr/bin/env bash
# Session 29, call 3 (~4 minutes; carry .carry: this tree's build).
# Call 2's timeline: in the 0.6B's step attention (~5.8 us a launch) the merge of its 4 warps' partials (256 values,
# two loop turns a thread) took 1.1 us and the rope 0.7 (1 L2 round trip), the tiles 1.6; in the 8B's 1.8 / 2.3 / 1.6.
# Work that small taking a microsecond suggests the code itself: a kernel runs once a layer, its instructions fetched
# past the instruction caches, and a step streams its weights (0.4-4.6 GB) through L2, which pushes the code (and the
# activations, the caches) out. chain_bench says a launch boundary itself is ~0.8-1.0 us.
# Decode A/B/C (the record's sets, 3 rounds): A as built, B with the weights' loads asking L2 to evict them first
# (kernels/prelude.cuh LK_WEIGHT_HINT=1: createpolicy evict_first, ld.global.nc.L2::cache_hint), C also L1::no_allocate
# (LK_WEIGHT_HINT=2). Prediction: if the code's fetches from DRAM are what the small kernels wait on, B +3-8% on the
# 8B (its layers stream 130 MB each: the code surely leaves L2), +0-3% on the 0.6B (13 MB a layer); if not, ~0.
# Logits bitwise equal (the same values).
set -u
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
for run in "qwen3-0.6b $S" "llama-3.1-8b $R"; do
  read -r P K <<< "$run"
  KNOBS="$K" AB_SIDES="a b c" NVFLAGS_B=-DLK_WEIGHT_HINT=1 NVFLAGS_C=-DLK_WEIGHT_HINT=2 TYPE=q4_k_m PREFILL=64 \
    AB_DECODE_AT=5 AB_PROMPT_LENS="5" ROUNDS=3 timeout 230 bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 |
    tee $OUT/ab-$P.txt | grep -E "decode A|logits|tokens|FAIL" | cut -c1-200
done
