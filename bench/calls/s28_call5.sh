#!/usr/bin/env bash
# Session 28, call 5 (~8 minutes; carry .carry: this tree's build; .llama/llama-bench.xz). Call 4: pdl_first (every
# launch lets the next one start before its wait) +3.6% on qwen3-0.6b, -2% on llama-3.1-8b. Which launches' early
# trigger pays: LK_PDL_FIRST's bits (kernels/prelude.cuh) by NVFLAGS on the record's set: A none, B every kernel but
# the decode GEMVs (norms, attention, arg-max's before-last...), C the decode GEMVs only, D all (the knob). 2 rounds.
# Then bench/speed.sh side by side with llama-bench on qwen3-0.6b (the record with gemv_short and pdl_first).
# Prediction: the 8B's loss from C (a GEMV's successor resident under its last wave), the 0.6B's gain from B (the
# GEMVs' blocks resident under the norm's and attention's tails): B >= D on both. speed.sh: 0.6B ~1,870 tok/s decode
# against ~740 (2.5x).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true}
for run in "llama-3.1-8b $R" "qwen3-0.6b $S"; do
  read -r P K <<< "$run"
  AB_SIDES="a b c d" KNOBS="$K" KNOBS_D="${K/\"pdl\":true/\"pdl\":true,\"pdl_first\":true}" \
    NVFLAGS_B=-DLK_PDL_FIRST=1 NVFLAGS_C=-DLK_PDL_FIRST=2 TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5" \
    ROUNDS=2 timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt |
    grep -E "decode A|tokens|FAIL" | cut -c1-200
done
F=${S/\"pdl\":true/\"pdl\":true,\"pdl_first\":true}
TYPE=q4_k_m KNOB_SETS="$F" timeout 240 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06.txt 2>&1
echo "speed 0.6b rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-06.txt | cut -c1-250 | tail -12
