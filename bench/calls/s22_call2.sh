#!/usr/bin/env bash
# Session 22, call 2 (~8 minutes; carry .carry = HEAD (the gate/up GEMV's joint rounds on) and .llama/llama-bench.xz).
# (1) ncu --set full on the 8B Q4_K_M's decode GEMVs with the stall reasons (call 1's name filter matched nothing:
#     now `lk_gemv` after 32 launches of a one-token prompt = layer 8's q/k/v, o, gate/up, down and layer 9's).
#     Prediction: long-scoreboard stalls dominate, DRAM throughput 55-65%, issue slots mostly idle.
# (2) the record side by side with llama-bench with the joint rounds (one split, checked against the reference first).
#     Prediction: 8B ~436 tok/s (session 21: 428 + 1.8%), 0.6B ~1,380 (1,315 + 5%), prefill as session 21.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
TYPE=q4_k_m KNOBS="$B" DEPTH=1 SKIP=32 NCU_LINES=600 timeout 200 bash bench/ncu_kernels.sh $L /tmp/n llama-3.1-8b 'lk_gemv' 8 > $OUT/ncu.txt 2>&1
echo "ncu rc=$?"; grep -E '^  [a-z_].*\(|Duration|DRAM Throughput|long_scoreboard|Achieved Occ' $OUT/ncu.txt | cut -c1-120
cp /tmp/n/llama-3.1-8b.ncuk.txt $OUT/ncu-full.txt 2>/dev/null
. bench/calls/llama_prelude.sh
TYPE=q4_k_m KNOB_SETS="${B}" timeout 330 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b qwen3-0.6b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; sed -n '/==== speed/,$p' $OUT/speed.txt | cut -c1-230 | tail -30
