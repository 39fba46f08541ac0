# One device call of session 9 (run from the repository root on the GPU machine: `bash bench/calls/FILE`).
set -u
. bench/calls/prelude.sh
SETS_ONLY="7 8 9" SPEED_PRESETS="" timeout 250 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats.txt 2>&1
echo "formats rc=$? $(date)"
SPEED_ONLY=1 SPEED_SETS="6 7 8 9" SPEED_PRESETS="qwen3-0.6b llama-3.1-8b" timeout 250 bash bench/formats_check.sh $L /tmp/fc > $OUT/speed.txt 2>&1
echo "speed rc=$? $(date)"
grep -E "valid|FAIL|INVALID" $OUT/formats.txt | head -40
grep -v "^----" $OUT/speed.txt | tail -10
