#!/usr/bin/env bash
# Prepared in session 36 (~8 minutes; carry .carry, this tree's build): norm_fold, the decode step's add + norms folded
# into the o and down projections (lk_gemv_fold's per-span epilogue; the readers scale by the spans' sums: no norm
# launch but the first layer's), built and checked on the CPU plan model in session 36, first on the GPU here.
# (1) `measure --verify` (the CPU reference: tokens, logits within the int8 bound, --stagger bit for bit) on tiny-llama
# Q4_K_M, tiny-qwen3 Q8_0 and tiny-qwen2 (biases), int8 and int8x2, with fuse_qkv/fuse_glu and gemv_short. (2) Decode
# A/B on llama-3.1-8b Q4_K_M and qwen3-0.6b Q4_K_M, A the record's sets, B + norm_fold. Prediction: verified
# everywhere; the 8B +8-12% (64 - 1 norm launches of ~3.9 us, the fold's tails back ~1 us a projection), the 0.6B
# +8-12% (56 - 1 of ~1.5 us). If it wins: a prior with it and bench/speed.sh side by side with llama-bench.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
F='{"numerics":"int8","gemv_prequant":true,"norm_fold":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true}'
VERIFY_PRESETS="tiny-llama:q4_k_m tiny-qwen3:q8_0 tiny-qwen2:q8_0" verify_presets 120 "$F" \
  "${F/\"int8\"/\"int8x2\"}" "${F/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"glu_stage\":true}"
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
p() { echo "${1%\}},\"norm_fold\":true}"; }
KNOBS_A="$R" KNOBS="$(p "$R")" TYPE=q4_k_m PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab-f llama-3.1-8b > $OUT/ab-fold-8b.txt 2>&1
grep -E "decode A|prefill|logits|FAIL|rror" $OUT/ab-fold-8b.txt | cut -c1-200
for s in a b; do
  D=/tmp/ab-f/llama-3.1-8b.ab-$s
  [ -x $D/lane ] && $D/lane /tmp/ab-f/llama-3.1-8b-q4_k_m.gguf $D/lane.sidecar 64 1 2 3 4 5 --profile 2>&1 |
    awk -v s=$s '/^PROFILE: (add_norm|gemv_fold|norm)/ {n[$2]++; t[$2] += $NF} END {for (k in n) printf "%s: %s %d launches %.1f us\n", s, k, n[k], t[k]}'
done
KNOBS_A="$S" KNOBS="$(p "$S")" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 120 bash bench/ab_decode.sh $L $L /tmp/ab-f6 qwen3-0.6b > $OUT/ab-fold-06b.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-fold-06b.txt | cut -c1-200
