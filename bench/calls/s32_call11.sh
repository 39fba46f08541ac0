#!/usr/bin/env bash
# Session 32, call 11 (~1 minute; carry .carry: this tree's build). glu_stage as a knob (the kernel's STAGE template
# argument, the same code as calls 8 and 10's LK_GLU_SMX=1): measure --verify on tiny-llama Q4_K_M and tiny-qwen3
# Q4_K under int8 and int8x2 with it on. Prediction: 4 of 4 verified.
set -u
. bench/calls/prelude.sh
I8='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"gemv_rows_per_warp":1,"glu_stage":true}'
I8X2='{"numerics":"int8x2","gemv_prequant":true,"fuse_glu":true,"pdl":true,"max_chunk":16,"gemv_rows_per_warp":1,"glu_stage":true}'
W=/tmp/v; mkdir -p $W
for PT in tiny-llama:q4_k_m tiny-qwen3:q4_k; do
  P=${PT%%:*}; T=${PT##*:}; F=$W/$P-$T.gguf
  $L synth --preset $P --type $T --seed 3 -o $F -q
  timeout 80 $L measure $F --knobs-json "$I8" --knobs-json "$I8X2" --verify --workload 200,16 --repeat 1 \
    --cache $W/cache > $OUT/$P-$T.measure 2> $OUT/$P-$T.err
  echo "$P $T: $(grep -cE '^ +[0-9]+ +verified ' $OUT/$P-$T.measure) of 2 verified"
  grep -E '^ +[0-9]+ +(failed|screened) ' $OUT/$P-$T.measure | cut -c1-250 | head -4
  [ -s $OUT/$P-$T.measure ] || tail -3 $OUT/$P-$T.err
done
