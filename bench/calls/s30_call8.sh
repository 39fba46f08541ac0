#!/usr/bin/env bash
# Session 30, call 8 (prepared, not run: the budget was spent; ~2 minutes, no carry needed). The splits' fold in one
# L2 round trip (kernels/attention.cuh's LK_FOLD_ONE_TRIP: each thread's values' partials asked before the maxima,
# which they do not need; a pair's weights' exps by a warp's lanes at once; the sum in split order by one lane: the
# same numbers) against the lanes' form, in attention_bench (the step's own fold, llama-3.1-8b's heads). Its max diff
# says whether it is right; ptxas gives the step attention 12 bytes of spill with it (the first batch's 64 values held
# across the maxima at the 128-register cap), so the one-split rows say whether the tile loop pays for that.
# Prediction: 32k/32 47.5 -> ~44 us a layer, 8k/16 18.1 -> ~16.5, one split unchanged. If it holds: the lane (verify,
# depth.sh with 32 splits), then the switch's default 1 and the old form removed.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ab-old bench/attention_bench.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -DLK_FOLD_ONE_TRIP=1 -o /tmp/ab-new bench/attention_bench.cu &
wait
for v in old new; do
  for d in 2048 8192 32768; do timeout 60 /tmp/ab-$v mmafold $d; done > $OUT/attn-$v.txt 2>&1
done
cd $OUT && echo "depth splits old new (us a layer) old-diff new-diff"
paste <(awk '$1 != "kernel" {print $3, $4, $5}' attn-old.txt) <(awk '$1 != "kernel" {print $5}' attn-new.txt) \
  <(awk '$1 != "kernel" {print $NF}' attn-old.txt) <(awk '$1 != "kernel" {print $NF}' attn-new.txt)
