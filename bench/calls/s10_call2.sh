# Session 10, call 2: llama-bench built (brought back for the side-by-side run), the block GEMVs alone again (the
# K-quant headers shared by shuffles in the library now; the streaming variant), the 8B Q4_K_M decode with them.
set -u
. bench/calls/prelude.sh
(bash bench/llama_build.sh .llama/src.tar.xz /tmp/lb /tmp/llama-bench > $OUT/llama-build.txt 2>&1 && xz -T0 -6 -c /tmp/llama-bench > $OUT/llama-bench.xz) &
LB=$!
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb4 bench/gemv_bench.cu && timeout 150 /tmp/gb4 > $OUT/gemv.txt 2>&1; echo "gemv rc=$?"
KNOBS='{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":1,"cuda_graphs":true}' \
  timeout 200 bash bench/formats_profile.sh $L /tmp/fp llama-3.1-8b q4_k_m > $OUT/profile-8b.txt 2>&1; echo "profile rc=$?"
wait $LB; echo "llama build rc=$? $(date)"
cat $OUT/gemv.txt
cat $OUT/profile-8b.txt
tail -3 $OUT/llama-build.txt; ls -la $OUT
