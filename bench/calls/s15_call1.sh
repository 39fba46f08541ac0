#!/usr/bin/env bash
# For the next GPU session, call 1 (~8 minutes; carry .carry and .llama/llama-bench.xz): (1) qwen3-0.6b Q4_K_M side by
# side with llama-bench (bench/speed.sh) under session 14's call 3 sets, now that compare_logits.py counts an allowed
# near-tie flip as the worker does (call 3's f16-cache sets failed its check only there); (2) llama-3.1-8b Q4_K_M at
# long context (bench/depth.sh: a 32,768-token prompt then 128, prefill(8192)) with gemm_half beside session 12's best.
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
B='{"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
H="$B,\"gemm_half\":true,\"kv_cache\":\"f16\",\"attn_mma\":2"
TYPE=q4_k_m KNOB_SETS="$B,\"gemm_prequant\":true,\"gemm_tile\":128}
$H}" timeout 200 bash bench/speed.sh $L /tmp/s6 /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b.txt 2>&1
echo "speed 0.6b rc=$?"; grep -E "decode .*tok/s|FAIL|pp512|tg128" $OUT/speed-06b.txt | cut -c1-220
TYPE=q4_k_m KNOB_SETS="$B,\"gemm_prequant\":true,\"gemm_tile\":128,\"kv_cache\":\"f16\",\"attn_mma\":2,\"attn_splits\":32}
$H,\"attn_splits\":32}" timeout 330 bash bench/depth.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b > $OUT/depth.txt 2>&1
echo "depth rc=$?"; sed -n '/==== depth/,$p' $OUT/depth.txt
