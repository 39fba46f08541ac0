#!/usr/bin/env bash
# Session 22, call 5 (~1.5 minutes; carry .carry = this tree, .carry-old = f6aca63): the 0.6B's A/B of the gate/up
# GEMV reading its activations once, alone (call 4 ran it with the rotating slots: +3.0%). Prediction +2-3%, logits
# bitwise equal.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 110 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-once-qwen3-0.6b.txt | grep "===="
