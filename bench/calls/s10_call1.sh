# One device call of session 10 (from the repository root on the GPU machine: `bash bench/calls/FILE`): llama-bench
# built in the background (brought back for the later calls), the block GEMVs alone (bench/gemv_bench.cu, two depths
# of loads in flight), and where the 8B Q4_K_M's decode step goes by kind of launch.
set -u
. bench/calls/prelude.sh
(bash bench/llama_build.sh .llama/src.tar.xz /tmp/lb /tmp/llama-bench > $OUT/llama-build.txt 2>&1 && xz -T0 -6 -c /tmp/llama-bench > $OUT/llama-bench.xz) &
LB=$!
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb4 bench/gemv_bench.cu && nvcc -O3 -std=c++20 -arch=sm_90 -DLK_GEMV_AHEAD=8 -o /tmp/gb8 bench/gemv_bench.cu
timeout 120 /tmp/gb4 > $OUT/gemv-ahead4.txt 2>&1; echo "gemv4 rc=$?"
timeout 120 /tmp/gb8 > $OUT/gemv-ahead8.txt 2>&1; echo "gemv8 rc=$?"
KNOBS='{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2,"cuda_graphs":true}' \
  timeout 200 bash bench/formats_profile.sh $L /tmp/fp llama-3.1-8b q4_k_m > $OUT/profile-8b.txt 2>&1; echo "profile rc=$?"
wait $LB; echo "llama build rc=$? $(date)"
cat $OUT/gemv-ahead4.txt; grep -v "^ *lib\|^ *pf\|^ *q4k" $OUT/gemv-ahead8.txt | head -0; cat $OUT/gemv-ahead8.txt | grep -v base
cat $OUT/profile-8b.txt
tail -3 $OUT/llama-build.txt
