#!/usr/bin/env bash
# Session 32, call 7 (~4 minutes; carry .carry: this tree's build and gemv_bench). The fused gate/up GEMV's joint
# rounds now stage the int8 copy's row in shared memory (LK_GLU_SMX, 1 by default; call 6's bv_smx: the pair 19.6 ->
# 18.6 us, bit for bit). (1) gemv_bench: the library's pair now against bv_smx (the same bits and time expected).
# (2) measure --verify on tiny-llama Q4_K_M under int8 and int8x2 with the copy (P 1 and 2 words staged).
# (3) decode A/B: A the switch off (NVFLAGS_A), B on; logits compared. Prediction: 8B +1.5-2.5% (the pair is a third
# of the step), 0.6B +0-1% (k 1,024: the staging is a larger share of a short row).
set -u
GB_SHAPE=gate+up timeout 60 .carry/gb-smx "glu" > $OUT/gemv-glu.txt 2>&1
cut -c1-80 $OUT/gemv-glu.txt | grep -v base
. bench/calls/prelude.sh
I8='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"gemv_rows_per_warp":1}'
I8X2='{"numerics":"int8x2","gemv_prequant":true,"fuse_glu":true,"pdl":true,"max_chunk":16,"gemv_rows_per_warp":1}'
W=/tmp/v; mkdir -p $W
for PT in tiny-llama:q4_k_m tiny-qwen3:q4_k; do
  P=${PT%%:*}; T=${PT##*:}; F=$W/$P-$T.gguf
  $L synth --preset $P --type $T --seed 3 -o $F -q
  timeout 80 $L measure $F --knobs-json "$I8" --knobs-json "$I8X2" --verify --workload 200,16 --repeat 1 \
    --cache $W/cache > $OUT/$P-$T.measure 2> $OUT/$P-$T.err
  echo "$P $T: $(grep -cE '^ +[0-9]+ +verified ' $OUT/$P-$T.measure) of 2 verified"
  grep -E '^ +[0-9]+ +(failed|screened) ' $OUT/$P-$T.measure | cut -c1-250 | head -4
done
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
for run in "qwen3-0.6b $S 130" "llama-3.1-8b $R 170"; do
  read -r P K T <<< "$run"
  KNOBS="$K" NVFLAGS_A="-DLK_GLU_SMX=0" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
    timeout $T bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
done
