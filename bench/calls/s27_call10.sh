#!/usr/bin/env bash
# Session 27, call 10 (~2 minutes; no carry; prepared, not run: the budget ran out). Calls 4-8: the decode step's
# attention at 32k reads ~2.4-3 TB/s, and a second block an SM adds nothing.
# 1. bench/stream_bench.cu: what a block streams through an SM with the attention's staging (cp.async tiles in stages,
#    each waited for and used before its stage is refilled) and nothing else to do, against the same bytes loaded
#    into registers, at 1-8 blocks of 128 threads an SM.
# 2. LK_AM_STEP_VSPLIT (an experiment switch in kernels/attention_mma.cuh, off in lanes): the decode step's warps each
#    score all 64 positions of a tile (8 independent score chains, 4x the score products) and weigh a quarter of the
#    value columns, so no merge of the warps' partials (ptxas: 128 registers against 158). attention_bench mmafold,
#    off against on, twice in turn; its max diff against lk_attention says whether it is right.
# Predictions: (1) if cp.async staging alone stops near 3 TB/s at 1-2 blocks an SM, the copy path is the bound (the
# tensor map's bulk copies or register staging next); if it reaches ~4+ TB/s, the tile's arithmetic and barriers are.
# (2) the step at one tile (depth 512, one split) 13.6 -> ~10 us (no merge), at 32k with 16-32 splits +0-20%.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/sb bench/stream_bench.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/am0 bench/attention_bench.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -DLK_AM_STEP_VSPLIT=1 -o /tmp/am1 bench/attention_bench.cu &
wait
/tmp/sb | tee $OUT/stream.txt
for r in 1 2; do for v in 0 1; do /tmp/am$v mmafold > $OUT/vsplit$v-$r.txt 2>&1; done; done
paste <(awk '$1 == "mmafold" {print $3, $4, $5, $8}' $OUT/vsplit0-1.txt) <(awk '$1 == "mmafold" {print $5, $8}' $OUT/vsplit1-1.txt) \
  <(awk '$1 == "mmafold" {print $5}' $OUT/vsplit0-2.txt) <(awk '$1 == "mmafold" {print $5}' $OUT/vsplit1-2.txt) |
  awk 'BEGIN {print "depth splits | off us (diff) | on us (diff) | off again | on again"} {print $1, $2, "|", $3, "(" $4 ")", "|", $5, "(" $6 ")", "|", $7, "|", $8}'
