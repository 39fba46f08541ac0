#!/usr/bin/env bash
# Session 29, call 9 (~2-3 minutes of the budget's last 7; carry .carry: this tree's build). The timeline with the step
# attention's marks again (as call 2), after the session's changes (the rope's loads ahead, the merge's factors once, the
# weights evict-first), both models. Prediction: the 8B's rope phase (marks 1-2) 2.3 -> ~1.3 us, the merge (7-4) ~1.7
# -> ~1.0; the 0.6B's merge 1.1 -> ~0.8.
set -u
. bench/calls/prelude.sh
. bench/common.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
W=/tmp/ab; mkdir -p $W
printf '#!/bin/sh\nexec /usr/local/cuda/bin/nvcc -DLK_TIMELINE=1 "$@"\n' > $W/tl-nvcc && chmod +x $W/tl-nvcc
for run in "qwen3-0.6b $S" "llama-3.1-8b $R"; do
  read -r P K <<< "$run"
  F=$(TYPE=q4_k_m checkpoint $L $W $P)
  echo "$K" > $W/$P.tl.json
  $L compile $F --knobs $W/$P.tl.json -o $W/$P.tl > /dev/null
  LT_NVCC=$W/tl-nvcc $L build $W/$P.tl --arch sm_90 > $W/$P.tl.log 2>&1 || { echo "BUILD_FAIL $P"; tail -5 $W/$P.tl.log; }
  T=$(tokens "$(vocab $W/$P.tl)" 5 7)
  LK_TIMELINE_FILE=$OUT/tl-$P.txt $W/$P.tl/lane $F $W/$P.tl/lane.sidecar 128 $T 2>&1 | grep -E "DECODE_TOK|rror" | head -3
  python3 bench/timeline.py $OUT/tl-$P.txt $W/$P.tl > $OUT/timeline-$P.txt 2>&1
  head -1 $OUT/timeline-$P.txt; sed -n '/^step/,$p' $OUT/timeline-$P.txt | head -24
done
xz -9 $OUT/tl-*.txt
