#!/usr/bin/env bash
# Prepared in sessions 36-37 (~6 minutes; carry .carry, this tree's build; then s37_norm_fold_ab.sh at once, ~6
# minutes): norm_fold, the decode step's add + norms folded into the o and down projections (no norm launch but the
# first layer's), in its two forms: the spans' last blocks found by counters and fences (norm_fold), and blocks of one
# 32-group of rows each ending its own group after a barrier (norm_fold_groups, session 37); and glu_groups (session
# 37: a short-row GLU's blocks of a 32-group writing the down projection's int8 copy, no quantize launch). Checked on
# the CPU plan model and by nvcc builds; first on the GPU here: `measure --verify` (the CPU reference: tokens, logits
# within the int8 bound, --stagger bit for bit) on tiny-llama Q4_K_M, tiny-qwen3 Q8_0 and tiny-qwen2 (biases), int8
# and int8x2, with gemv_short and glu_stage, both norm forms; glu_groups on tiny-llama Q4_K_M (its GLU rows one unit a
# lane), beside either norm form. Prediction: every set verified.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
F='{"numerics":"int8","gemv_prequant":true,"norm_fold":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true}'
G="${F/\"norm_fold\":true/\"norm_fold\":true,\"norm_fold_groups\":true}"
short() { echo "${1/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"glu_stage\":true}"; }
VERIFY_PRESETS="tiny-llama:q4_k_m tiny-qwen3:q8_0 tiny-qwen2:q8_0" verify_presets 130 "$F" "${F/\"int8\"/\"int8x2\"}" \
  "$(short "$F")" "$G" "${G/\"int8\"/\"int8x2\"}" "$(short "$G")"
# glu_groups (session 37: the GLU's blocks of a 32-group writing the down's copy) where its domain holds it: the GLU rows
# of tiny-llama's k 256 (one unit a lane), beside both norm forms and without.
U="${F/\"fuse_glu\":true/\"fuse_glu\":true,\"glu_groups\":true}"
VERIFY_PRESETS="tiny-llama:q4_k_m" verify_presets 100 "$U" "${U/\"int8\"/\"int8x2\"}" \
  "${U/\"norm_fold\":true/\"norm_fold\":true,\"norm_fold_groups\":true}" "$(short "$U")"
