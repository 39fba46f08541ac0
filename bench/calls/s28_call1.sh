#!/usr/bin/env bash
# Session 28, call 1 (~8 minutes; carry .carry: this tree's build).
# 1. Session 27's prepared call 10 (bench/stream_bench.cu; LK_AM_STEP_VSPLIT off against on), one round.
# 2. Where the decode step's time goes apart from the GEMVs, and whether the next launch may start before the wait
#    (kernels/prelude.cuh's measurement switches, by bench/ab_decode.sh's NVFLAGS): llama-3.1-8b and qwen3-0.6b Q4_K_M,
#    the record's set, lanes A (as every lane), B -DLK_PDL_FIRST=1 (a launch lets the next one start before its wait:
#    the next GEMV's blocks take the SMs the one before leaves in its tail and ask their first weights there; the arg-max
#    still after its wait), C the attention launches returning at once, D the norms, E both. 3 rounds.
# Predictions: B +3-6% on the 8B (~0.5-1 us a launch boundary of ~7 a layer), +5-10% on the 0.6B, logits bitwise
# equal. C/D/E (wrong numbers, timing only): the 8B without attention ~+10% (8 us a layer in the profile, part of it
# the q/k/v GEMV's tail), without norms ~+8%, both ~+20%; these bound what folding them away could gain.
set -u
. bench/calls/prelude.sh
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/sb bench/stream_bench.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/am0 bench/attention_bench.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -DLK_AM_STEP_VSPLIT=1 -o /tmp/am1 bench/attention_bench.cu &
wait
echo "== 1. stream_bench"
timeout 60 /tmp/sb | tee $OUT/stream.txt
for v in 0 1; do timeout 60 /tmp/am$v mmafold > $OUT/vsplit$v.txt 2>&1; done
paste <(awk '$1 == "mmafold" {print $3, $4, $5, $8}' $OUT/vsplit0.txt) <(awk '$1 == "mmafold" {print $5, $8}' $OUT/vsplit1.txt) |
  awk 'BEGIN {print "depth splits | off us (diff) | on us (diff)"} {print $1, $2, "|", $3, "(" $4 ")", "|", $5, "(" $6 ")"}'
echo "== 2. decode A/B/C/D/E"
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true}
for run in "llama-3.1-8b $R" "qwen3-0.6b $S"; do
  read -r P K <<< "$run"
  AB_SIDES="a b c d e" NVFLAGS_B=-DLK_PDL_FIRST=1 NVFLAGS_C=-DLK_ABLATE=1 NVFLAGS_D=-DLK_ABLATE=2 NVFLAGS_E=-DLK_ABLATE=3 \
    TYPE=q4_k_m KNOBS="$K" PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 240 \
    bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|tokens|FAIL" | cut -c1-220
done
