#!/usr/bin/env bash
# Session 45 (~7 minutes; carry .carry (this tree), .carry-old (6f711ce: q, k and v a launch each) and .carry-b (this
# tree with the groups never split)): call 1 found the grouped q/k/v GEMM 0.91x in prefill(512) on the 8B (and the
# worker's kernel modules lacking gemm_half's switch for the new kernels: fixed). Where the chunk's time goes with each
# build (measure --profile, launches of 512 rows by kind, 3 repeats), the 8B Q4_K_M and qwen3-0.6b Q4_K_M; then the
# new build verified on the 8B's first 3 layers (synthesized) and qwen2.5-7b's shape in 2 layers (biases).
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
. bench/calls/s45_sets.sh
$L synth --preset llama-3.1-8b --type q4_k_m --seed 1 -o /tmp/ab/8b.gguf -q &
$L synth --preset qwen3-0.6b --type q4_k_m --seed 1 -o /tmp/ab/06b.gguf -q &
wait
echo "synth ($(( $(date +%s) - T0 )) s)"
for r in 1 2; do
  for who in old new c; do
    B_=$L; [ $who = old ] && B_=/tmp/old/lane-tune; [ $who = c ] && B_=/tmp/cb/lane-tune
    chunk_profile $who $B_ /tmp/ab/8b.gguf "$REC"
  done
done
echo "($(( $(date +%s) - T0 )) s)"
for who in old new c; do
  B_=$L; [ $who = old ] && B_=/tmp/old/lane-tune; [ $who = c ] && B_=/tmp/cb/lane-tune
  chunk_profile $who $B_ /tmp/ab/06b.gguf "$R06"
done
echo "($(( $(date +%s) - T0 )) s)"
LAYERS=3 verify_real l8 llama-3.1-8b q4_k_m "700 300" 120 "$REC" "$X2"
LAYERS=2 verify_real q25 qwen2.5-7b q8_0 "600 300" 100 "$R06" "$X2"
echo "($(( $(date +%s) - T0 )) s)"
