# Session 11, call 2: long context side by side (bench/depth.sh): llama-3.1-8b Q4_K_M lanes of 33,024 positions, a
# 32,768-token prompt then 128 generated (decode at depth 32k) and prefill(8192), against llama.cpp's llama-bench on the
# same file (pp8192, pp32768; tg128 at depth 32768 with f16 and q8_0 caches). Sets: the f32 cache with the warp-a-
# position attention (the base the others' logits are compared with), f16 and q8_0 with the lane-a-position
# attention split 64 ways, f16 with the warp-a-position attention split 64 ways.
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
B='{"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
TYPE=q4_k_m KNOB_SETS="$B,\"attn_splits\":16}
$B,\"kv_cache\":\"f16\",\"attn_lanes\":true,\"attn_splits\":64}
$B,\"kv_cache\":\"q8_0\",\"attn_lanes\":true,\"attn_splits\":64}
$B,\"kv_cache\":\"f16\",\"attn_splits\":64}" timeout 560 bash bench/depth.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b > $OUT/depth.txt 2>&1
echo "depth rc=$? $(date)"
sed -n '/==== depth/,$p' $OUT/depth.txt
mkdir -p /tmp/ct
for p in tiny-moe tiny-qwen2moe tiny-gpt-oss; do $L synth --preset $p --type f32 -o /tmp/ct/$p.gguf -q; done
timeout 100 python3 bench/check_transformers.py $L /tmp/ct/tiny-moe.gguf /tmp/ct/tiny-qwen2moe.gguf /tmp/ct/tiny-gpt-oss.gguf > $OUT/transformers.txt 2>&1
echo "transformers rc=$?"; grep -E "LAYOUT|ROPE|RESULT|Error|error" $OUT/transformers.txt | head -20
