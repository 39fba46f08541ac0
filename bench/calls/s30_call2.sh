#!/usr/bin/env bash
# Session 30, call 2 (~2 minutes; no carry needed). The step attention at depth (attention_bench, llama-3.1-8b's heads,
# 8 warps a block since call 1): (a) the in-kernel fold's loads all in flight (LK_FOLD_WIDE: two values a thread, 16
# splits' loads of both at once, in split order, against 8 at a time of one value: 8 L2 round trips in series at 32
# splits); (b) 4 and 5 stages (LK_AM_STEP_STAGES: 3 or 4 tiles in flight, one block an SM) against 3. Prediction: the
# fold -3 to -5 us at 32 splits, -1 to -2 at 16; more stages at 16 splits 43 -> ~35 us (the in-flight bytes the
# bound: 64 KB an SM at 3.6 TB/s is ~2.3 us of latency covered).
set -u
export PATH=/usr/local/cuda/bin:$PATH
V="old:-DLK_FOLD_WIDE=0 wide: s4:-DLK_AM_STEP_STAGES=4 s5:-DLK_AM_STEP_STAGES=5"
for v in $V; do
  nvcc -O3 -std=c++17 -arch=sm_90 ${v#*:} -o /tmp/ab-${v%%:*} bench/attention_bench.cu &
done
wait
for v in $V; do
  n=${v%%:*}
  for d in 2048 8192 32768; do timeout 60 /tmp/ab-$n mmafold $d; done > $OUT/attn-$n.txt 2>&1
done
timeout 60 /tmp/ab-old mma 32768 > $OUT/attn-old-mma.txt 2>&1
cd $OUT && for v in $V; do printf '%s ' ${v%%:*}; done; echo
paste <(awk '$1 != "kernel" {print $3, $4, $5}' attn-old.txt) <(awk '$1 != "kernel" {print $5}' attn-wide.txt) \
  <(awk '$1 != "kernel" {print $5}' attn-s4.txt) <(awk '$1 != "kernel" {print $5}' attn-s5.txt)
cat attn-old-mma.txt
grep -h "e+0[0-9]\|nan\|inf" attn-*.txt | head
