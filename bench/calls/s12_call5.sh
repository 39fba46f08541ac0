# Session 12, call 5: the mixtures in the lane on the H200 (#17; bench/moe_check.sh): tiny-moe and tiny-qwen2moe through
# `measure --verify` under 7 (+2) knob sets, the release's program (lane.cu) for tiny-moe q8_0 and q4_k against the
# reference and under --stagger; then qwen3-30b-a3b q8_0 (synth) verified on short prompts and timed (decode after a
# 512-token prompt, prefill(512)).
set -u
. bench/calls/prelude.sh
SKIP_BIG=1 timeout 240 bash bench/moe_check.sh $L /tmp/moe > $OUT/moe_tiny.txt 2>&1; echo "tiny rc=$?"
tail -25 $OUT/moe_tiny.txt
timeout 300 bash bench/moe_check.sh $L /tmp/moe > $OUT/moe_big.txt 2>&1; echo "big rc=$?"
sed -n '/qwen3-30b-a3b verify/,$p' $OUT/moe_big.txt | head -30
