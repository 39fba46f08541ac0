#!/usr/bin/env bash
# Session 28, call 8 (~2 minutes, the budget's last; carry .carry: this tree's build). fuse_qkv_mixed, a knob built
# after call 7's timeline (a Q6_K v's launch of its own spans ~2.5 us a layer on qwen3-0.6b, ~3 us on the 8B, in half
# the layers): v in the fused q/k launch (lk_gemv_parts_mixed). Decode A/B on qwen3-0.6b Q4_K_M, the record (gemv_short,
# pdl_first) without and with it, 2 rounds; logits compared (the same sums a row: bitwise equal).
# Prediction: +3-4% (14 launch boundaries of ~2 us less a step of ~535 us), unless the kernel's registers (the Q6_K
# rows' 121 beside Q4_K's 60) cost the q/k rows their occupancy.
set -u
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"pdl_first":true,"gemv_short":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
KNOBS_A="$R" KNOBS="${R/\"fuse_qkv\":true/\"fuse_qkv\":true,\"fuse_qkv_mixed\":true}" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 \
  AB_PROMPT_LENS="5" ROUNDS=2 timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-06b.txt |
  grep -E "decode A|tokens|FAIL" | cut -c1-200
