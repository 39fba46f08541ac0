# Session 12, call 2: long context side by side (bench/depth.sh) with attention on the tensor cores: llama-3.1-8b
# Q4_K_M lanes of 33,024 positions, a 32,768-token prompt then 128 generated (decode at depth 32k) and prefill(8192),
# against llama.cpp's llama-bench on the same file. Sets: session 11's best (f16 cache, lane-a-position decode
# attention split 64 ways; the base the others' logits are compared with), attn_mma 2 (chunks and decode on the tensor
# cores) split 32 ways over the f16 and the bf16 cache.
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
B='{"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
TYPE=q4_k_m KNOB_SETS="$B,\"kv_cache\":\"f16\",\"attn_lanes\":true,\"attn_splits\":64}
$B,\"kv_cache\":\"f16\",\"attn_mma\":2,\"attn_splits\":32}
$B,\"kv_cache\":\"bf16\",\"attn_mma\":2,\"attn_splits\":32}" timeout 570 bash bench/depth.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b > $OUT/depth.txt 2>&1
echo "depth rc=$? $(date)"
sed -n '/==== depth/,$p' $OUT/depth.txt
