#!/usr/bin/env bash
# Session 22, call 1 (~9 minutes; carry .carry = HEAD, .carry-old = HEAD built with LK_GLU_JOINT 0).
# (1) ncu --set full on the 8B Q4_K_M's decode GEMVs (bench/ncu_kernels.sh, a one-token prompt so every launch is a
#     decode step's; layers 8 and 9: o, gate/up, down in Q4_K and Q6_K): what holds them at 2.5-2.9 TB/s. Prediction:
#     long-scoreboard stalls on the weights, ~40% of issue slots idle, DRAM throughput 60-65%.
# (2) #19: the step attention's stages, 3 (the lanes') against 2 (3 blocks an SM by shared memory, not 2),
#     bench/attention_bench.cu at the 8B's shapes to 32k. Prediction: 2 stages +15-30% at 32k, same or worse short.
# (3) the 0.6B's A/B of the gate/up GEMV's joint rounds (prediction 0 to +2%, logits bitwise equal).
set -u
. bench/calls/prelude.sh
for st in 3 2; do
  (nvcc -O3 -std=c++17 -arch=sm_90 -DLK_AM_STEP_STAGES=$st -o /tmp/attention_bench$st bench/attention_bench.cu > $OUT/attn_build$st.txt 2>&1 || echo "attention_bench $st build failed") &
done
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
RE='lk_gemv_glu<lk_blk<12>, 1, 1|lk_gemv<lk_blk<1[24]>, [12], 1, lk_xq>'
TYPE=q4_k_m KNOBS="$B" DEPTH=1 SKIP=24 NCU_LINES=400 timeout 260 bash bench/ncu_kernels.sh $L /tmp/n llama-3.1-8b "$RE" 6 2>&1 | tee $OUT/ncu.txt | head -60
cp /tmp/n/llama-3.1-8b.ncuk.txt $OUT/ncu-full.txt 2>/dev/null
wait
for st in 3 2; do
  timeout 70 /tmp/attention_bench$st > $OUT/attention_bench$st.txt 2>&1; echo "stages $st rc=$?"; grep -i "mma" $OUT/attention_bench$st.txt | head -20
done
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 150 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-gj-qwen3-0.6b.txt | grep "===="
