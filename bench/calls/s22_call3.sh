#!/usr/bin/env bash
# (Ran at d4ca897; the next commit reverts its streamed sums and gemv_resident: bench/NOTES.md "session 22".)
# Session 22, call 3 (~9 minutes; carry .carry = this tree, .carry-old = f6aca63, the record's build).
# The block-format GEMVs' new sums (kernels/gemv.cuh lk_gemv_stream_i8b: loads that rotate instead of rounds that
# drain; the gate/up GEMV reading each unit's activations once for both matrices) and the new knob gemv_resident (the
# decode step's block-format GEMVs launched as the blocks the GPU holds at once, each warp walking its rows with the
# next row's weights in flight). Same sums in the same order: logits bitwise equal in every A/B.
# (1) 8B Q4_K_M: f6aca63 against this tree with gemv_resident. Prediction +5-8% decode (call 2's ncu: gate/up 57% issue
#     busy with memory and arithmetic phases apart; down 70% long-scoreboard over 4 drained rounds).
# (2) 0.6B the same. Prediction +0-5% (its rows are short: one round; launch-bound).
# (3) 8B: this tree without gemv_resident against with (what the walk alone gives). Prediction: the walk +4-7%.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1'
R="$B,\"gemv_resident\":true}"
TYPE=q4_k_m KNOBS_A="$B}" KNOBS="$R" PREFILL="5" timeout 200 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-res-llama-3.1-8b.txt | grep "===="
TYPE=q4_k_m KNOBS_A="$B}" KNOBS="$R" PREFILL="5" timeout 120 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-res-qwen3-0.6b.txt | grep "===="
TYPE=q4_k_m KNOBS_A="$B}" KNOBS="$R" PREFILL="5" ROUNDS=2 timeout 170 bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-walk-llama-3.1-8b.txt | grep "===="
