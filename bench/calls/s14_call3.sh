#!/usr/bin/env bash
# Session 14, call 3 (~7 minutes; carry .carry and .llama/llama-bench.xz): gemm_half's shapes as re-chosen after call 2
# (64x64 blocks where 64x128 leaves half the SMs idle; split along k only there) side by side with llama-bench
# (bench/speed.sh) on llama-3.1-8b and qwen3-0.6b Q4_K_M, each set checked against the reference and --stagger first.
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
B='{"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
H="$B,\"gemm_half\":true,\"kv_cache\":\"f16\",\"attn_mma\":2"
TYPE=q4_k_m KNOB_SETS="$H}
$H,\"fuse_norm\":true}" timeout 300 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed-8b.txt 2>&1
echo "speed 8b rc=$?"
TYPE=q4_k_m KNOB_SETS="$B,\"gemm_prequant\":true,\"gemm_tile\":128}
$B,\"gemm_prequant\":true,\"gemm_tile\":128,\"kv_cache\":\"f16\",\"attn_mma\":2}
$H}
$H,\"fuse_norm\":true}" timeout 200 bash bench/speed.sh $L /tmp/s6 /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b.txt 2>&1
echo "speed 0.6b rc=$?"
for f in $OUT/speed-8b.txt $OUT/speed-06b.txt; do grep -E "decode .*tok/s|FAIL|t/s|pp512|tg128|bound" $f | cut -c1-200; done
