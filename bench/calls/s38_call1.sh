#!/usr/bin/env bash
# Session 38, call 1 (~9.5 minutes; carry .carry rebuilt with glu_groups over Q8_0, and .llama; bench/runs moved aside
# for the 64 MiB limit).
# (1) glu_groups over Q8_0 (built this session: lk_gemv_glu_group's gate then up sums over lk_q8 where the rows are one
# or two 16-value units a lane) judged by the CPU reference on tiny-qwen3 Q8_0 (k 256: one unit) and qwen3-0.6b's
# shape (k 1,024: two units), int8 and int8x2; then decode A/B on qwen3-0.6b Q8_0 (A session 31's record set, B +
# glu_groups), 2 rounds. Prediction: verified; B +2-4% (the Q4_K_M's 1.032x on the H100: one quantize launch a layer).
# (2) qwen3-0.6b Q4_K_M side by side with llama-bench (bench/speed.sh): the record's small-model set S, and S +
# glu_groups. Prediction: S ~2,050 tok/s (sessions 32-36), S + glu_groups ~2,110; prefill unchanged.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
R8='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
G8="${R8%\}},\"glu_groups\":true}"
VERIFY_PRESETS="tiny-qwen3:q8_0" verify_presets 90 "$G8" "${G8/\"int8\"/\"int8x2\"}"
verify_real v06 qwen3-0.6b q8_0 "5 300" 120 "$G8" "${G8/\"int8\"/\"int8x2\"}"
KNOBS_A="$R8" KNOBS="$G8" TYPE=q8_0 PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5" ROUNDS=2 \
  timeout 130 bash bench/ab_decode.sh $L $L /tmp/ab-q8 qwen3-0.6b > $OUT/ab-glu-06b-q8.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-glu-06b-q8.txt | cut -c1-200
. bench/calls/llama_prelude.sh
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
TYPE=q4_k_m KNOB_SETS="$S"$'\n'"${S%\}},\"glu_groups\":true}" timeout 250 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- \
  qwen3-0.6b > $OUT/speed-06b-q4km.txt 2>&1
echo "speed 0.6b q4_k_m rc=$?"; grep -E "tok/s|pp512|tg128|bound" $OUT/speed-06b-q4km.txt | cut -c1-220 | head -10
