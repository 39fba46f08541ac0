#!/usr/bin/env bash
# Prepared in session 33 for the next GPU session, after s33_call3.sh (~7 minutes; carry .carry and .llama, with
# bench/runs moved aside for the 64 MiB limit). bench/speed.sh side by side with llama-bench on llama-3.1-8b Q4_K_M,
# the record's set with gemv_pipe at the value call 3's A/B chose (the first argument: 0, 1 or 2; 0 re-measures the
# record). Prediction: with the value call 3 chose, decode = call 3's B or C (the record's 551 times its ratio),
# prefill unchanged (~16,300: gemv_pipe changes the decode step only).
set -u
PIPE=${1:-0}
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
[ "$PIPE" != 0 ] && R="${R%\}},\"gemv_pipe\":$PIPE}"
echo "knobs: $R"
TYPE=q4_k_m KNOB_SETS="$R" timeout 380 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b \
  > $OUT/speed-8b-q4km.txt 2>&1
echo "speed 8b q4_k_m rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-8b-q4km.txt | cut -c1-200 | head -24
