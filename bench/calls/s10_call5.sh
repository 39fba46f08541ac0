# Session 10, call 5: side by side in one run on the same Q4_K_M files (bench/speed.sh: each lane checked against the
# CPU reference first, then decode tg128-like and prefill(512) medians of 3 processes; llama.cpp's llama-bench pp512 /
# tg128 with flash attention, all layers on the GPU). Lanes: the best point of session 9 (2 rows a warp) and this
# session's (1 row a warp, Q6_K matrices 2: gemv_rows_q6_k), with the K-quants' shared headers in both.
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
A='{"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":2}'
B='{"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2}'
TYPE=q4_k_m KNOB_SETS="$A
$B" timeout 480 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b qwen3-0.6b > $OUT/speed.txt 2>&1
echo "speed rc=$? $(date)"
sed -n '/==== speed/,$p' $OUT/speed.txt
