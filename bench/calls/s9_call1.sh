# One device call of session 9 (run from the repository root on the GPU machine: `bash bench/calls/FILE`).
set -u
. bench/calls/prelude.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
SETS_ONLY="7 8" SPEED_PRESETS="" timeout 260 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats.txt 2>&1
echo "formats rc=$? $(date)"
SPEED_ONLY=1 SPEED_SETS="3 6 7" SPEED_PRESETS="qwen3-0.6b llama-3.1-8b" timeout 280 bash bench/formats_check.sh $L /tmp/fc > $OUT/speed.txt 2>&1
echo "speed rc=$? $(date)"
cat $OUT/formats.txt | grep -E "valid|FAIL|INVALID" | head -30
cat $OUT/speed.txt | grep -v "^----" | tail -12
