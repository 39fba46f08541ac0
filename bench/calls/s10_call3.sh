# Session 10, call 3: the K-quants' shared headers and gemv_rows_q6_k judged by the CPU reference (every 256-block
# format, the split and prequantized GEMVs among the sets), llama-bench built and brought back in parts (for call 4's
# side-by-side run), and the 8B Q4_K_M's decode step by kind of launch under the new rows a warp.
set -u
. bench/calls/prelude.sh
(bash bench/llama_build.sh .llama/src.tar.xz /tmp/lb /tmp/llama-bench > $OUT/llama-build.txt 2>&1 && xz -T0 -6 -c /tmp/llama-bench | split -b 15M - $OUT/llama-bench.xz.) &
LB=$!
TYPES="q2_k q3_k q4_k q5_k iq4_xs" SETS_ONLY="4 5 6" SPEED_PRESETS="" timeout 150 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats-a.txt 2>&1; echo "formats a rc=$?"
TYPES="q4_k_m q5_k_m q6_k" SETS_ONLY="4 6 9 10" SPEED_PRESETS="" timeout 120 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats-b.txt 2>&1; echo "formats b rc=$?"
KNOBS='{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"cuda_graphs":true}' \
  timeout 150 bash bench/formats_profile.sh $L /tmp/fp llama-3.1-8b q4_k_m > $OUT/profile-8b.txt 2>&1; echo "profile rc=$?"
wait $LB; echo "llama build rc=$? $(date)"
grep -E "valid|FAIL|INVALID|lane.cu" $OUT/formats-a.txt $OUT/formats-b.txt | head -40
cat $OUT/profile-8b.txt
tail -3 $OUT/llama-build.txt; ls -la $OUT
