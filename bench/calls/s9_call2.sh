# One device call of session 9 (run from the repository root on the GPU machine: `bash bench/calls/FILE`).
set -u
. bench/calls/prelude.sh
SETS_ONLY="7 8" SPEED_PRESETS="" timeout 200 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats.txt 2>&1
echo "formats rc=$? $(date)"
SPEED_ONLY=1 SPEED_SETS="3 6 7" SPEED_PRESETS="qwen3-0.6b llama-3.1-8b" timeout 200 bash bench/formats_check.sh $L /tmp/fc > $OUT/speed.txt 2>&1
echo "speed rc=$? $(date)"
TYPE=q4_k_m PROMPT=1 COUNT=3 KERNELS='lk_gemv' timeout 150 bash bench/ncu_gemm.sh $L /tmp/fc llama-3.1-8b \
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2}' > $OUT/ncu.txt 2>&1
echo "ncu rc=$? $(date)"
grep -E "valid|FAIL|INVALID" $OUT/formats.txt | head -24
grep -v "^----" $OUT/speed.txt | tail -8
