#!/usr/bin/env bash
# Session 47, call 4 (carry .carry; ~4 minutes, no llama-bench: too little device time left for its build): the
# record's numbers with this build, bench/speed.sh alone. On an H200 llama-3.1-8b Q4_K_M with s44_side.sh's two sets
# (prediction: prefill(512) ~18,600 as the H100's, the same SMs and clocks; decode ~550, session 35's 553); on an H100
# qwen3-0.6b Q4_K_M with its record set (R06 + gemv_short; prediction decode ~2,000, prefill ~99,000). ONLY_06=1:
# the 0.6B on either (on the H200 prediction ~2,100 / ~99,000: session 32's 2,014 before gemv_short's logits).
set -u
. bench/calls/prelude.sh
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
R06=$(grep "^R06=" bench/calls/s45_sets.sh | sed "s/^R06='//; s/'$//")
case "$G" in
  *H200*)
    P=llama-3.1-8b
    SETS=$(grep -E "^(R|C)='" bench/calls/s44_side.sh | sed "s/^[RC]='//; s/'$//") ;;
  *) P=qwen3-0.6b; SETS="${R06%\}},\"gemv_short\":true}" ;;
esac
[ -n "${ONLY_06:-}" ] && P=qwen3-0.6b && SETS="${R06%\}},\"gemv_short\":true}"
TYPE=q4_k_m KNOB_SETS="$SETS" timeout ${SPEED_TIMEOUT:-300} bash bench/speed.sh $L /tmp/s "" -- $P > $OUT/speed-$P.txt 2>&1
echo "speed $P rc=$?"; grep -E "tok/s|bound|rate|^  " $OUT/speed-$P.txt | cut -c1-200 | head -30
