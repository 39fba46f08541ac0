#!/usr/bin/env bash
# (LK_GEMV_ROTATE and LK_AM_BULK existed for this call only: bench/NOTES.md "session 22"; the tree keeps neither.)
# Session 22, call 4 (~6 minutes; carry .carry-old = f6aca63, .carry = this tree (LK_GEMV_ROTATE 1), .carry-v1 = this
# tree built with LK_GEMV_ROTATE 0). Call 3's streamed sums with walking warps lost 6-9% (their spills: 20 bytes in
# the glu and the Q4_K GEMV). Without the walk, no spill: (1) 8B f6aca63 against rotating slots + the gate/up GEMV's
# activations read once; (2) against the activations once alone (rounds as before); (3) the 0.6B, f6aca63 against the
# rotating build. Prediction: (2) +0.5-2% (fewer instructions in the gate/up GEMV), (1) +2-4% (the down projection's
# 4 drained rounds overlapped). Logits bitwise equal in each.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o /tmp/v1 && tar xJf .carry-old/bundle.tar.xz -C /tmp/o && tar xJf .carry-v1/bundle.tar.xz -C /tmp/v1
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 170 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-rot-llama-3.1-8b.txt | grep "===="
TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 170 bash bench/ab_decode.sh /tmp/o/lane-tune /tmp/v1/lane-tune /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-once-llama-3.1-8b.txt | grep "===="
TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 100 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-rot-qwen3-0.6b.txt | grep "===="
# (4) #19: attn_mma's tiles by the bulk copy engine (LK_AM_BULK 1: a row a copy, mbarriers) against cp.async, mma only
#     (bench/attention_bench.cu mma; its max diff checks against lk_attention). Call 1: 2 stages or 3 made no
#     difference, 2.35 TB/s at 32k with 32 splits: bytes in flight are not the bound by blocks, so by the copies' issue
#     and tracking. Prediction: 32k 32 splits 2.35 -> 3.3-3.8 TB/s; chunks unchanged (+-5%).
for b in 0 1; do
  nvcc -O3 -std=c++17 -arch=sm_90 -DLK_AM_BULK=$b -o /tmp/attn$b bench/attention_bench.cu > $OUT/attn_build_bulk$b.txt 2>&1 || echo "bulk $b build failed"
  timeout 60 /tmp/attn$b mma > $OUT/attention_bulk$b.txt 2>&1; echo "bulk $b rc=$?"; grep -E " (8192|32768) | 32512 " $OUT/attention_bulk$b.txt
done
