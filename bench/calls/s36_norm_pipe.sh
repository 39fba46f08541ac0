#!/usr/bin/env bash
# Prepared in session 35 for the next GPU session (~6 minutes; carry .carry = main's build (norm blocks of 512 threads
# up to d 4,096) and .carry-b = the same with 1,024 past d 1,024 (compiler/src/lane/lower.cpp norm_threads:
# `return d <= 1024 ? 256 : 1024;`; session 35 left both bundled; rebuild them if the tree changed: bench/carry.sh
# build/cli/lane-tune DIR).
# Session 35's call 3 gave the 8B's add_norm 256 threads in place of 512: 3.90 -> 4.89 us a launch, decode 0.964x. So
# the norm's time is its own chain a thread (4 float4s of the row and 4 of the addend a thread at 256, 2 at 512), not
# its residency beside the GEMV, and fewer values a thread should shorten it: the 0.6B's row of 1,024 at one float4 a
# thread (256 threads) takes 1.55 us. (1) Decode A/B on llama-3.1-8b Q4_K_M, the record's set, A main's build, B 1,024
# threads. Prediction: add_norm 3.90 -> ~2.5 us (the block's sum over 32 warps costs back part of it), decode +3-5%,
# prefill(512) unchanged (its norms are 512 blocks of a row each either way). (2) gemv_pipe on the 8B Q8_0 (A the
# record's Q8_0 set, B + gemv_pipe 2, C + 1): the one form not yet measured in the lane as a knob. Prediction: within
# +-1%; if it loses, gemv_pipe leaves the space and the kernels.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/b && tar xJf .carry-b/bundle.tar.xz -C /tmp/b
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
KNOBS="$R" TYPE=q4_k_m PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 200 bash bench/ab_decode.sh $L /tmp/b/lane-tune /tmp/ab-n llama-3.1-8b > $OUT/ab-norm.txt 2>&1
grep -E "decode A|prefill|logits|FAIL|rror" $OUT/ab-norm.txt | cut -c1-200
for s in a b; do
  D=/tmp/ab-n/llama-3.1-8b.ab-$s
  [ -x $D/lane ] && $D/lane /tmp/ab-n/llama-3.1-8b-q4_k_m.gguf $D/lane.sidecar 64 1 2 3 4 5 --profile 2>&1 |
    awk -v s=$s '/^PROFILE: add_norm/ {n++; t += $NF} END {printf "%s: add_norm %d launches %.1f us\n", s, n, t}'
done
Q='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
p() { echo "${1%\}},\"gemv_pipe\":$2}"; }
KNOBS_A="$Q" KNOBS="$(p "$Q" 2)" KNOBS_C="$(p "$Q" 1)" TYPE=q8_0 PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  ROUNDS=3 timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab-q8 llama-3.1-8b > $OUT/ab-8b-q8.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-8b-q8.txt | cut -c1-200
