#!/usr/bin/env bash
# Session 38, call 4 (~4 minutes; carry .carry): a 2-minute tuning job on qwen3-0.6b Q4_K_M as a user runs it, with
# the model search's new prior (the small model's set with glu_groups), then the chosen configuration and that set
# (HAND) measured side by side. Prediction: the job screens the prior among its first and chooses it or one within
# ~2% of it on the job's objective (the workload: a 512-token prompt and 128 tokens).
set -u
. bench/calls/prelude.sh
HAND='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true,"glu_groups":true}'
HAND="$HAND" TYPE=q4_k_m timeout 280 bash bench/tune_h200.sh $L /tmp/tj qwen3-0.6b 2m > $OUT/tune-06b.txt 2>&1
echo "tune rc=$?"; tail -16 $OUT/tune-06b.txt | cut -c1-300
cp /tmp/tj/job/results.json $OUT/ 2> /dev/null; xz -9 $OUT/results.json 2> /dev/null
