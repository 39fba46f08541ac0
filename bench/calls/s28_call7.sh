#!/usr/bin/env bash
# Session 28, call 7 (~4 minutes; carry .carry: this tree's build). One decode step's timeline (kernels/prelude.cuh's
# LK_TIMELINE: each block stamps %globaltimer around its first PDL wait; bench/timeline.py groups the blocks into the
# step's launches): llama-3.1-8b Q4_K_M (the record's set) and qwen3-0.6b Q4_K_M (with gemv_short and pdl_first), the
# middle step of 128 after a 5-token prompt. The question (#16): between two GEMVs, how long from the one's first
# release to the next one's, and how that compares with its bytes at the read rate.
# Prediction: the 8B's gate/up ~18 us, o ~4-5 us (2.1 at the rate), the attention's span ~5-7 us; the stamps add
# ~2-5% to the step.
set -u
. bench/calls/prelude.sh
. bench/common.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
W=/tmp/tl; mkdir -p $W
printf '#!/bin/sh\nexec /usr/local/cuda/bin/nvcc -DLK_TIMELINE=1 "$@"\n' > $W/nvcc && chmod +x $W/nvcc
for run in "llama-3.1-8b $R" "qwen3-0.6b $S"; do
  read -r P K <<< "$run"
  F=$(TYPE=q4_k_m checkpoint $L $W $P)
  echo "$K" > $W/$P.json
  $L compile $F --knobs $W/$P.json -o $W/$P > /dev/null
  LT_NVCC=$W/nvcc $L build $W/$P --arch sm_90 > $W/$P.build.log 2>&1 || { echo "BUILD_FAIL $P"; tail -5 $W/$P.build.log; }
  T=$(tokens "$(vocab $W/$P)" 5 7)
  LK_TIMELINE_FILE=$OUT/tl-$P.txt $W/$P/lane $F $W/$P/lane.sidecar 128 $T 2>&1 | grep -E "DECODE_TOK|rror" | head -3
  python3 bench/timeline.py $OUT/tl-$P.txt $W/$P > $OUT/timeline-$P.txt 2>&1
  head -1 $OUT/timeline-$P.txt; sed -n '/^step/,$p' $OUT/timeline-$P.txt | head -14
done
xz -9 $OUT/tl-*.txt
