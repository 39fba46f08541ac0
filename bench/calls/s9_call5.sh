# One device call of session 9 (run from the repository root on the GPU machine: `bash bench/calls/FILE`).
set -u
. bench/calls/prelude.sh
TYPES="iq4_nl iq4_xs q2_k q3_k" LANE_TYPES="iq4_xs q2_k q3_k" SPEED_PRESETS="" timeout 250 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats.txt 2>&1
echo "formats rc=$? $(date)"
TYPE=q4_k_m HAND='{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2,"gemm_prequant":true,"gemm_tile":128}' timeout 200 bash bench/tune_h200.sh $L /tmp/tq qwen3-0.6b 90s > $OUT/tune.txt 2>&1
echo "tune rc=$? $(date)"
cp /tmp/tq/job/*.log $OUT/ 2>/dev/null
grep -E "valid|FAIL|INVALID|lane.cu" $OUT/formats.txt | head -40
tail -25 $OUT/tune.txt
