#!/usr/bin/env bash
# For the next GPU session (~10 minutes; carry .carry = HEAD, .carry-old = session 21's REV build, i.e. without the
# gate/up GEMV's joint rounds): (1) the 0.6B's A/B of the joint rounds that session 21's last call did not reach
# (prediction: 0 to +2%, logits bitwise equal); (2) ncu --set full on the 8B's decode gate/up GEMV and a Q4_K and a
# Q6_K down projection (bench/ncu_kernels.sh): what holds the large GEMVs at 2.5-2.9 TB/s (stall reasons, achieved
# occupancy, L2 traffic of the int8 copy); prediction: long-scoreboard stalls on the weights with ~40% of the
# issue slots idle, DRAM throughput 60-65%.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 120 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-gj-qwen3-0.6b.txt | grep "===="
for RE in 'lk_gemv_glu' 'lk_gemv<lk_blk<12>, 1, 1, lk_xq>' 'lk_gemv<lk_blk<14>, 2, 1, lk_xq>'; do
  TYPE=q4_k_m KNOBS="$B" SKIP=8 timeout 200 bash bench/ncu_kernels.sh $L /tmp/n llama-3.1-8b "$RE" 1 2>&1 | tee -a $OUT/ncu.txt | head -40
done
# (3) #19: the step attention's stages, 3 (the lanes') against 2 (74 KB of shared memory a block: 3 blocks an SM, not
# 2), bench/attention_bench.cu at the 8B's shapes over depths to 32k. Prediction: 2 stages +15-30% at 32k (more blocks
# resident, each with one tile in flight), the same or worse at short depths.
for st in 3 2; do
  nvcc -O3 -std=c++17 -arch=sm_90 -DLK_AM_STEP_STAGES=$st -o /tmp/attention_bench$st bench/attention_bench.cu > $OUT/attn_build$st.txt 2>&1 || echo "attention_bench $st build failed"
  timeout 100 /tmp/attention_bench$st > $OUT/attention_bench$st.txt 2>&1; echo "stages $st rc=$?"; grep -i "mma" $OUT/attention_bench$st.txt | head -20
done
