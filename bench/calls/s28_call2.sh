#!/usr/bin/env bash
# Session 28, call 2 (~6 minutes; carry .carry: this tree's build). l2_ahead, a knob built this session: each decode
# GEMV's blocks ask L2 (cp.async.bulk.prefetch.L2) for the first l2_ahead MiB of the next decode GEMV's matrices before
# their PDL wait. Call 1's ablations: the attention costs ~4.8 us a layer on both models, the norms nothing; the 8B's
# layer GEMVs run at ~0.55 of the read rate, so the memory idles ~24 us a layer between and around them.
# Decode A/B/C/D (3 rounds, the record's set): A l2_ahead 0, B 8, C 16, D 32; E 16 with -DLK_PDL_FIRST=1.
# Prediction: the 8B +5-10% at 16 (the o projection's blocks pull ~12 MB of gate/up under the attention, gate/up's
# pull down's first part under its tail), the 0.6B +10-20% (a layer's ~7 MB after the attention wholly from L2);
# 32 no better than 16 on the 8B (L2 holds ~50 MB); logits bitwise equal (the same sums).
set -u
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true}
ah() { echo "${1%\}},\"l2_ahead\":$2}"; }
for run in "llama-3.1-8b $R" "qwen3-0.6b $S"; do
  read -r P K <<< "$run"
  AB_SIDES="a b c d e" KNOBS_A="$K" KNOBS="$(ah "$K" 8)" KNOBS_C="$(ah "$K" 16)" KNOBS_D="$(ah "$K" 32)" \
    KNOBS_E="$(ah "$K" 16)" NVFLAGS_E=-DLK_PDL_FIRST=1 \
    TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 270 \
    bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|tokens|FAIL" | cut -c1-220
done
