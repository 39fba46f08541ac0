#!/usr/bin/env bash
# Session 29, call 7 (~6 minutes, the budget's last; carry .carry: this tree's build, .llama/llama-bench.xz):
# bench/speed.sh side by side with llama-bench on llama-3.1-8b Q4_K_M, the record's set (the session's changes: the
# weights evict-first in L2, the step attention's rope loads ahead and merge factors once), checked against the CPU
# reference first. Prediction: decode ~530 tok/s against ~272 (1.95x), prefill(512) ~16,500 against ~9,300.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
TYPE=q4_k_m KNOB_SETS="$R" timeout 420 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed-8b.txt 2>&1
echo "speed 8b rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-8b.txt | cut -c1-200 | head -22; tail -4 $OUT/speed-8b.txt
