#!/usr/bin/env bash
# Prepared in session 35 for the next GPU session (~7 minutes; carry .carry, .carry-old and .carry-b, bundled at the
# end of session 35; rebuild them if the tree changed: bench/carry.sh build/cli/lane-tune DIR):
#   .carry-old  the session-35 record's build: norm blocks of 512 threads up to d 4,096, the register form sized for 4
#               float4s a thread whatever the launch used (lk_add_rmsnorm<.., .., 4>: 60 registers on the 8B);
#   .carry      main: the register form sized to the launch's pieces (kernels/shapes.cuh lk_norm_pieces: the 8B's 2
#               at 512 threads, 46 registers; the 0.6B's 1 at 256, 28), the same sums bit for bit;
#   .carry-b    main with norm blocks of 1,024 threads past d 1,024 (compiler/src/lane/lower.cpp norm_threads:
#               `return d <= 1024 ? 256 : 1024;`): the 8B's one float4 a thread, 28 registers.
# Session 35's call 3 gave the 8B's add_norm 256 threads (4 pieces a thread): 3.90 -> 4.89 us a launch, decode 0.964x:
# the norm's time is its own chain a thread. (1) Decode A/B/C on llama-3.1-8b Q4_K_M, the record's set. Prediction:
# B ~1.00x (the same loads and sums, fewer registers), bitwise equal; C: add_norm 3.90 -> ~2.5 us, decode +3-5% (the
# block's sum over 32 warps costs back part of it), logits near (another sum order). (2) The 0.6B Q4_K_M A/B (its norm
# from 60 registers to 28). (3) gemv_pipe on the 8B Q8_0 (A the record's Q8_0 set, B + gemv_pipe 2, C + 1): the one form
# not yet measured in the lane as a knob. Prediction: within +-1%; if it loses, gemv_pipe leaves the space and kernels.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o /tmp/b && tar xJf .carry-old/bundle.tar.xz -C /tmp/o && tar xJf .carry-b/bundle.tar.xz -C /tmp/b
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
KNOBS="$R" KNOBS_C="$R" LT_C=/tmp/b/lane-tune TYPE=q4_k_m PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 220 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab-n llama-3.1-8b > $OUT/ab-norm.txt 2>&1
grep -E "decode A|prefill|logits|FAIL|rror" $OUT/ab-norm.txt | cut -c1-200
for s in a b c; do
  D=/tmp/ab-n/llama-3.1-8b.ab-$s
  [ -x $D/lane ] && $D/lane /tmp/ab-n/llama-3.1-8b-q4_k_m.gguf $D/lane.sidecar 64 1 2 3 4 5 --profile 2>&1 |
    awk -v s=$s '/^PROFILE: add_norm/ {n++; t += $NF} END {printf "%s: add_norm %d launches %.1f us\n", s, n, t}'
done
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
KNOBS="$S" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 120 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab-s qwen3-0.6b > $OUT/ab-norm-06b.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-norm-06b.txt | cut -c1-200
Q='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
p() { echo "${1%\}},\"gemv_pipe\":$2}"; }
KNOBS_A="$Q" KNOBS="$(p "$Q" 2)" KNOBS_C="$(p "$Q" 1)" TYPE=q8_0 PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  ROUNDS=3 timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab-q8 llama-3.1-8b > $OUT/ab-8b-q8.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-8b-q8.txt | cut -c1-200
