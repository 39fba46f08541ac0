# Session 10, call 4: the gated feed-forward's GEMV in one pass (both matrices' loads in flight together) against
# gate-then-up (bench/gemv_bench.cu), the decode norms that write their int8 copy, both judged by the CPU reference on
# the formats they touch (q8_0 too: its gemv_prequant lanes lose the quantize launches as well), and the 8B Q4_K_M's
# decode step by kind of launch with all of this session's changes.
set -u
. bench/calls/prelude.sh
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb bench/gemv_bench.cu && timeout 100 /tmp/gb > $OUT/gemv.txt 2>&1; echo "gemv rc=$?"
TYPES="q8_0 q4_k q6_k q2_k q5_0 mxfp4" SETS_ONLY="4 5 6 9" LANE_TYPES="q4_k_m" SPEED_PRESETS="" timeout 170 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats-a.txt 2>&1; echo "formats a rc=$?"
TYPES="q4_k_m" SETS_ONLY="4 6 9 10" LANE_TYPES="q4_k_m" SPEED_PRESETS="" timeout 80 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats-b.txt 2>&1; echo "formats b rc=$?"
KNOBS='{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"cuda_graphs":true}' \
  timeout 120 bash bench/formats_profile.sh $L /tmp/fp llama-3.1-8b q4_k_m > $OUT/profile-8b.txt 2>&1; echo "profile rc=$?"
grep -E "glu|gate" $OUT/gemv.txt
grep -E "valid|FAIL|INVALID|lane.cu" $OUT/formats-a.txt $OUT/formats-b.txt | sort -u | head -30
cat $OUT/profile-8b.txt
