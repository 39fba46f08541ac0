#!/usr/bin/env bash
# Session 48 (~2 minutes; carry .carry): call 3's tuning job chose attn_splits 16 and gemv_rows_q6_k 2 for qwen3-0.6b
# Q4_K_M where the record's hand set has 1 and 0; RESULTS.md's decode (after a 5-token prompt) put the chosen 6% behind
# the hand set. The job's objective is the default workload (512-token prompt, 128 generated: decode at 512-640
# positions). Here all four combinations on that workload and on decode after 5 tokens, one run, 5 timed runs each.
# Prediction: on the workload splits 16 ahead of 1 (the step attention's 8 blocks over ~600 positions), so the tuner's
# choice is right for its objective; after 5 tokens splits 1 ahead.
set -u
. bench/calls/prelude.sh
. bench/common.sh
nvidia-smi --query-gpu=name --format=csv,noheader
F=$(TYPE=q4_k_m checkpoint $L /tmp qwen3-0.6b)
R06=$(grep "^R06=" bench/calls/s45_sets.sh | sed "s/^R06='//; s/'$//")
H="${R06%\}},\"gemv_short\":true"
K=(--knobs-json "$H}" --knobs-json "$H,\"attn_splits\":16}" --knobs-json "$H,\"gemv_rows_q6_k\":2}"
   --knobs-json "$H,\"attn_splits\":16,\"gemv_rows_q6_k\":2}")
workload_lines wl06 "$F" 5 "512,128 5,129" "${K[@]}"
