#!/usr/bin/env bash
# Session 39, call 3 (~6.5 minutes; carry .carry at this tree): the 2-minute tuning job on qwen3-0.6b Q4_K_M with the
# kernel modules shared and their head without the host's headers (call 1 ran the sharing with the old head: 68
# configurations, 17 verified, against 50 and 7). Here (2 cores) the first configuration's 51 kernels took 33.6
# nvcc-seconds (147 one a module before, 46 shared with the old head). Prediction: >= 70 configurations, >= 15
# verified. Then, on an H200 only, norm_fold's A/B/C on the 8B (s37_norm_fold_ab.sh's first part; H100 0.90/0.95x).
set -u
. bench/calls/prelude.sh
G=h200; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && G=h100
TUNE_GPU=$G timeout 200 bash bench/tune_h200.sh $L /tmp/tj qwen3-0.6b 2m > $OUT/tune-06b.txt 2>&1
echo "== tune rc=$?"; grep -E "^job:|GPU util|cost \(median|where the|best \(verified\)|h[12]00: model" $OUT/tune-06b.txt | cut -c1-300
cp /tmp/tj/job/results.json $OUT/ 2> /dev/null; xz -9 $OUT/results.json 2> /dev/null
[ $G = h200 ] || exit 0
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
p() { echo "${1%\}},\"norm_fold\":true}"; }
g() { echo "${1%\}},\"norm_fold\":true,\"norm_fold_groups\":true}"; }
KNOBS_A="$R" KNOBS="$(p "$R")" KNOBS_C="$(g "$R")" TYPE=q4_k_m PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  ROUNDS=3 timeout 230 bash bench/ab_decode.sh $L $L /tmp/ab-f llama-3.1-8b > $OUT/ab-fold-8b.txt 2>&1
grep -E "decode A|prefill|logits|FAIL|rror" $OUT/ab-fold-8b.txt | cut -c1-200
