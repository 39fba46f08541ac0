#!/usr/bin/env bash
# Session 15, the last call (~9 minutes; carry .carry, .llama/llama-bench.xz and .llama/lib): llama.cpp side by side,
# what no run has shown yet: (1) the mixtures (#17): qwen3-30b-a3b Q8_0 and gpt-oss-20b MXFP4 (synth, random weights:
# timing only; the sets timed are the ones verified on the trained shapes in s15_trained_moe.sh), decode after a
# 512-token prompt and prefill(512), against llama-bench pp512/tg128 on the same files; (2) qwen3-0.6b Q4_K_M
# (bench/speed.sh, the set checked with the fixed compare and --stagger); (3) bench/gemv_bench.cu with the bulk-copy
# streaming GEMV (bv_bulk_gemv) against the lane's at the 8B's shapes; (4) llama-3.1-8b Q4_K_M at depth 32k with
# gemm_half (bench/depth.sh, one set), as long as time is left.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
. bench/common.sh
# (call F ran moe() with measure's table output, in this file; it prints JSON now, bench/calls/moe_side_by_side.sh)
. bench/calls/moe_side_by_side.sh
B='{"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
H="$B,\"gemm_half\":true,\"kv_cache\":\"f16\",\"attn_mma\":2"
TYPE=q4_k_m KNOB_SETS="$H}" timeout 100 bash bench/speed.sh $L /tmp/s6 /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b.txt 2>&1
echo "speed 0.6b rc=$?"; sed -n '/==== speed/,/profile of the fastest valid prefill/p' $OUT/speed-06b.txt | cut -c1-200
TYPE=q4_k_m KNOB_SETS="$H}" timeout 170 bash bench/speed.sh $L /tmp/s8 /tmp/llama-bench -- llama-3.1-8b > $OUT/speed-8b.txt 2>&1
echo "speed 8b rc=$?"; sed -n '/==== speed/,/profile of the fastest valid prefill/p' $OUT/speed-8b.txt | cut -c1-200
moe qwen3-30b-a3b q8_0
moe gpt-oss-20b mxfp4
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gemv_bench bench/gemv_bench.cu 2> $OUT/gemv_bench.build && \
  timeout 80 /tmp/gemv_bench > $OUT/gemv_bench.txt 2>&1
echo "gemv_bench rc=$?"; cat $OUT/gemv_bench.txt
