#!/usr/bin/env bash
# Session 32, call 5 (~7 minutes; carry .carry: this tree's build, .carry/a session 31's). Q5's fifth bits (Q5_0,
# Q5_1, Q5_K) laid out by the upload as Q6_K's high bits now are: a word of codes' fifth bits one shift and mask
# (lk_q5_high) where lk_spread1 took ~5 operations (with its multiply). (1) measure --verify (the CPU reference) of the
# Q5 formats on tiny presets: the decode GEMV's dot (int8), expand (dequant), the tensor-core chunks (gemm_prequant);
# Q6_K again in the q5_k_m mix. (2) decode A/B on qwen3-0.6b Q5_K_M (A session 31's build, B this one: Q5_K and
# Q6_K), logits compared. Prediction: every set verified; logits bitwise equal; B/A 1.04-1.07.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
I8='{"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true}'
I8X2='{"numerics":"int8x2","gemv_prequant":false,"max_chunk":16,"pdl":true}'
D='{"numerics":"dequant","max_chunk":16}'
H='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"gemm_half":true,"max_chunk":64}'
W=/tmp/v; mkdir -p $W
for PT in tiny-llama:q5_k_m tiny-llama:q5_0 tiny-llama:q5_1 tiny-qwen3:q5_k tiny-llama:q6_k; do
  P=${PT%%:*}; T=${PT##*:}; F=$W/$P-$T.gguf
  $L synth --preset $P --type $T --seed 3 -o $F -q
  timeout 100 $L measure $F --knobs-json "$I8" --knobs-json "$I8X2" --knobs-json "$D" --knobs-json "$H" --verify \
    --workload 200,16 --repeat 1 --cache $W/cache > $OUT/$P-$T.measure 2> $OUT/$P-$T.err
  echo "$P $T: $(grep -cE '^ +[0-9]+ +verified ' $OUT/$P-$T.measure) of 4 verified"
  grep -E '^ +[0-9]+ +(failed|screened) ' $OUT/$P-$T.measure | cut -c1-250 | head -4
  [ -s $OUT/$P-$T.measure ] || tail -3 $OUT/$P-$T.err
done
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
KNOBS="$R" TYPE=q5_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 \
  bash bench/ab_decode.sh /tmp/ca/lane-tune $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-q5km.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
