#!/usr/bin/env bash
# Session 29, call 9 (~2-3 minutes of the budget's last 7; carry .carry: this tree's build). The timeline with the step
# (Its timeline steps, written inline when it ran, are bench/timeline.sh's since.)
# attention's marks again (as call 2), after the session's changes (the rope's loads ahead, the merge's factors once, the
# weights evict-first), both models. Prediction: the 8B's rope phase (marks 1-2) 2.3 -> ~1.3 us, the merge (7-4) ~1.7
# -> ~1.0; the 0.6B's merge 1.1 -> ~0.8.
set -u
. bench/calls/prelude.sh
. bench/common.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
KNOBS="$S" bash bench/timeline.sh $L /tmp/ab $OUT qwen3-0.6b
KNOBS="$R" bash bench/timeline.sh $L /tmp/ab $OUT llama-3.1-8b
xz -9 $OUT/tl-*.txt
