#!/usr/bin/env bash
# Session 30, call 8 (prepared, not run: the budget was spent; ~8 minutes; carry .carry for the lane part). The
# splits' fold in one L2 round trip (kernels/attention.cuh's LK_FOLD_ONE_TRIP: each thread's values' partials asked
# before the maxima, which they do not need; a pair's weights' exps by a warp's lanes at once; the sum in split order
# by one lane: the same numbers) against the lanes' form, in attention_bench (the step's own fold, llama-3.1-8b's
# heads). Its max diff says whether it is right; ptxas gives the step attention 12 bytes of spill with it (the first
# batch's 64 values held across the maxima at the 128-register cap), so the one-split rows say whether the tile loop
# pays for that. Prediction: 32k/32 47.5 -> ~44 us a layer, 8k/16 18.1 -> ~16.5, one split unchanged. If it holds:
# the switch's default 1 and the old form removed.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ab-old bench/attention_bench.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -DLK_FOLD_ONE_TRIP=1 -o /tmp/ab-new bench/attention_bench.cu &
wait
for v in old new; do
  for d in 2048 8192 32768; do timeout 60 /tmp/ab-$v mmafold $d; done > $OUT/attn-$v.txt 2>&1
done
echo "depth splits old new (us a layer) old-diff new-diff"
(cd $OUT && paste <(awk '$1 != "kernel" {print $3, $4, $5}' attn-old.txt) <(awk '$1 != "kernel" {print $5}' attn-new.txt) \
  <(awk '$1 != "kernel" {print $NF}' attn-old.txt) <(awk '$1 != "kernel" {print $NF}' attn-new.txt))
# The lane (when this tree's build is carried as .carry): the tiny presets verified with the switch on (4 splits: the
# step's own fold; int8x2 + bf16 and int8 + f16), then #19's decode at depth 32k with it off and on (bench/depth.sh,
# the record's set with 32 splits, no llama-bench). Prediction: decode at 32k +3-4% (~3.5 us a layer of ~100).
[ -f .carry/bundle.tar.xz ] || exit 0
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
for v in 0 1; do
  printf '#!/bin/sh\nexec /usr/local/cuda/bin/nvcc -DLK_FOLD_ONE_TRIP=%s "$@"\n' $v > /tmp/nvcc$v && chmod +x /tmp/nvcc$v
done
S8='{"numerics":"int8x2","gemv_prequant":true,"pdl":true,"max_chunk":64,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
S4='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"pdl":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
echo "== verify with LK_FOLD_ONE_TRIP=1"
LT_NVCC=/tmp/nvcc1 verify_presets 60 "$S8" "$S4"
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":32}'
mkdir -p /tmp/d0 /tmp/d1
for v in 0 1; do
  [ $v = 1 ] && ln -sf /tmp/d0/llama-3.1-8b-q4_k_m.gguf /tmp/d1/llama-3.1-8b-q4_k_m.gguf
  LT_NVCC=/tmp/nvcc$v TYPE=q4_k_m KNOB_SETS="$B" timeout 200 bash bench/depth.sh $L /tmp/d$v "" -- llama-3.1-8b \
    > $OUT/depth-fold$v.txt 2>&1
  echo "LK_FOLD_ONE_TRIP=$v: $(grep -o 'decode@[0-9]* *[0-9.]* tok/s[^)]*)' /tmp/d$v/depth.txt)"
done
