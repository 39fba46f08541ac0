#!/usr/bin/env bash
# Session 30, call 3 (~2 minutes; no carry needed). The step attention's tile (attention_bench mmafold, llama-3.1-8b's
# heads, the fold's loads in flight since call 2): 64 positions at 8 warps (8 a warp, k8 products; call 1's form)
# against 128 at 8 warps (16 a warp) with 2 and 3 stages and 128 at 4 warps (32 a warp). Call 2: more stages (in-flight
# bytes) gave nothing at depth, so a tile's own chain (wait, barrier, the score chain, the softmax, barrier) binds;
# a tile of twice the positions halves the chains a byte. Prediction: 128 / 8 warps / 3 stages: depth 32k 16 splits
# 43 -> ~33 us, 8k ~18 -> ~14; one tile at 512 ~12.4 -> ~10.
set -u
export PATH=/usr/local/cuda/bin:$PATH
V="k64w8: k128w8s2:-DLK_AM_STEP_KEYS=128,-DLK_AM_STEP_STAGES=2 k128w8s3:-DLK_AM_STEP_KEYS=128 k128w4:-DLK_AM_STEP_KEYS=128,-DLK_AM_STEP_WARPS=4"
for v in $V; do
  f=${v#*:}
  nvcc -O3 -std=c++17 -arch=sm_90 ${f//,/ } -o /tmp/ab-${v%%:*} bench/attention_bench.cu &
done
wait
for v in $V; do
  n=${v%%:*}
  for d in 512 2048 8192 32768; do timeout 60 /tmp/ab-$n mmafold $d; done > $OUT/attn-$n.txt 2>&1
done
cd $OUT && for v in $V; do printf '%s ' ${v%%:*}; done; echo
paste <(awk '$1 != "kernel" {print $3, $4, $5}' attn-k64w8.txt) <(awk '$1 != "kernel" {print $5}' attn-k128w8s2.txt) \
  <(awk '$1 != "kernel" {print $5}' attn-k128w8s3.txt) <(awk '$1 != "kernel" {print $5}' attn-k128w4.txt)
awk '$1 != "kernel" {print FILENAME, $NF}' attn-*.txt | sort -k2 -g | tail -2
