#!/usr/bin/env bash
# Session 31, call 1 (~5 minutes; carry .carry). (1) Session 30's prepared fold in one L2 round trip
# (LK_FOLD_ONE_TRIP) in attention_bench against the lanes' form (prediction: 32k/32 47.5 -> ~44 us a layer, 8k/16
# 18.1 -> ~16.5, one split unchanged), and the tiny presets verified with it on. (2) #19's block imbalance: split
# counts that fill the two-a-SM slots evenly (8 key/value heads x 33 = 264 = 2 x 132 blocks of 16 tiles, where 32
# splits give 248 blocks of 17 and 16 SMs with one block). Prediction: 32k 33 splits ~6% under 32 (47.5 -> ~44.5),
# 66 near 64; if the spread of the blocks' finishing times is noise, not structure, no split count helps.
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
echo "== split scan (old, then new)"
for v in old new; do
  for ds in 2048:8 2048:9 2048:12 8192:16 8192:17 8192:24 8192:33 32768:24 32768:32 32768:33 32768:40 32768:48 \
            32768:64 32768:66 32768:99 32768:128; do
    timeout 30 /tmp/ab-$v mmafold ${ds%:*} ${ds#*:} | awk -v v=$v '$1 != "kernel" {print v, $3, $4, $5, $NF}'
  done
done | tee $OUT/scan.txt
[ -f .carry/bundle.tar.xz ] || exit 0
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
printf '#!/bin/sh\nexec /usr/local/cuda/bin/nvcc -DLK_FOLD_ONE_TRIP=1 "$@"\n' > /tmp/nvcc1 && chmod +x /tmp/nvcc1
S8='{"numerics":"int8x2","gemv_prequant":true,"pdl":true,"max_chunk":64,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
S4='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"pdl":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
echo "== verify with LK_FOLD_ONE_TRIP=1"
LT_NVCC=/tmp/nvcc1 verify_presets 60 "$S8" "$S4"
