#!/usr/bin/env bash
# Session 45 (~7 minutes; carry .carry (this tree) and .carry-old (6f711ce)): the grouped q/k/v GEMM again, now with
# only the tiles past its whole waves split along k (lk_gemm_tail_split: the 8B's 192 tiles = 132 whole + 60 in two
# parts, q/k's 160 = 132 + 28 in four) and a split tile's parts summed with their loads in flight (call 2: the split
# fixup's 64 x 2 dependent L2 trips cost ~100 us a launch). Prediction: the 8B's q/k/v 150.6 -> ~115 us a layer,
# prefill(512) +3-4%; the 0.6B +8% as in call 2 (its groups do not split); decode unchanged. Then the new kernels
# verified on synthesized shapes (the 8B's 3 layers: lk_gemm_w_parts and lk_gemm_h_parts with their tails split;
# qwen2.5-7b's 2 layers with q/k/v biases; qwen3-0.6b's 2 layers).
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
. bench/calls/s45_sets.sh
for P in llama-3.1-8b qwen3-0.6b; do
  K="$REC"; [ $P = qwen3-0.6b ] && K="$R06"
  TYPE=q4_k_m ROUNDS=3 PREFILL=512 KNOBS="$K" timeout 200 bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab $P 2>&1 |
    grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
  echo "($(( $(date +%s) - T0 )) s)"
done
chunk_profile new $L /tmp/ab/llama-3.1-8b-q4_k_m.gguf "$REC"
chunk_profile new $L /tmp/ab/qwen3-0.6b-q4_k_m.gguf "$R06"
echo "($(( $(date +%s) - T0 )) s)"
LAYERS=3 verify_real l8 llama-3.1-8b q4_k_m "700 300" 120 "$REC" "$X2"
LAYERS=2 verify_real q25 qwen2.5-7b q8_0 "600 300" 100 "$Q8" "$X2"
LAYERS=2 verify_real q06 qwen3-0.6b q4_k_m "600 300" 100 "$R06" "$X2"
echo "($(( $(date +%s) - T0 )) s)"
