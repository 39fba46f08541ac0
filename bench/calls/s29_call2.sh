#!/usr/bin/env bash
# Session 29, call 2 (~4 minutes; carry .carry: this tree's build).
# (Its timeline steps, written inline when it ran, are bench/timeline.sh's since.)
# 1. bench/chain_bench.cu: what a launch boundary costs in a chain of 200 tiny launches (plain, pdl, pdl_first, and a
#    hand-off by arrival counters with no griddepcontrol.wait), grids of 8-1,056 blocks. Prediction: pdl ~1.5-2 us a
#    launch, plain ~2.5-3; the counters ~1 us (a release's and an acquire's L2 round trips) if their blocks' fences
#    are not what costs (session 21: a fence a block cost the 8B's gate/up 4.6%).
# 2. The timeline again, its stamps now stores into slots taken before the wait (call 1's atomics after the wait
#    inflated the 0.6B's step 17%) and more marks in the step attention (6 after the tiles' barrier, 7 after the
#    partials' barrier, 8 after the first tile's wait). Prediction: the step within 5% of the untimed one's (534 us
#    on the 0.6B); the attention's tiles and merge ~0.5 us shorter each than call 1's.
set -u
. bench/calls/prelude.sh
. bench/common.sh
echo "== 1. chain_bench"
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/chain_bench bench/chain_bench.cu && /tmp/chain_bench | tee $OUT/chain.txt
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
echo "== 2. timeline"
KNOBS="$S" bash bench/timeline.sh $L /tmp/ab $OUT qwen3-0.6b
KNOBS="$R" bash bench/timeline.sh $L /tmp/ab $OUT llama-3.1-8b
xz -9 $OUT/tl-*.txt
