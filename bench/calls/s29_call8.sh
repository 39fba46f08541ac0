#!/usr/bin/env bash
# Session 29, call 8 (~3 minutes, the budget's last; carry .carry: this tree's build, .llama/llama-bench.xz):
# bench/speed.sh side by side with llama-bench on qwen3-0.6b Q4_K_M, the record's set with gemv_short and pdl_first (the session's changes: the
# weights evict-first in L2, the step attention's rope loads ahead and merge factors once), checked against the CPU
# reference first. Prediction: decode ~1,920 tok/s against ~740 (2.6x), prefill(512) ~86,000 against ~34,000.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
TYPE=q4_k_m KNOB_SETS="$S" timeout 360 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b.txt 2>&1
echo "speed 0.6b rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-06b.txt | cut -c1-200 | head -22; tail -4 $OUT/speed-06b.txt
