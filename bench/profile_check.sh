#!/usr/bin/env bash
# --profile against the step: for one preset, lanes with graphs on and off; the decode step's median time unprofiled
# and the per-launch profile's total. The issue's bound: the total within 10% of the step.
#
# usage: bench/profile_check.sh LANE_TUNE_BINARY WORKDIR PRESET
set -uo pipefail
LT=$1; W=$2; P=$3
export LT_NVCC=${LT_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$W"
F="$W/$P.gguf"
[ -f "$F" ] || "$LT" synth --preset "$P" --type q8_0 --seed 1 -o "$F" > /dev/null
for g in true false; do
  D="$W/$P.prof.$g"
  echo "{\"cuda_graphs\":$g}" > "$W/k.json"
  "$LT" compile "$F" --knobs "$W/k.json" -o "$D" > /dev/null && "$LT" build "$D" --arch sm_90 > /dev/null || { echo "$P graphs=$g build FAIL"; continue; }
  "$D/lane" "$F" "$D/lane.sidecar" 64 1 2 3 > "$D/time.txt" 2>&1
  "$D/lane" "$F" "$D/lane.sidecar" 64 1 2 3 --profile > "$D/prof.txt" 2>&1; rc=$?
  step=$(awk '/DECODE_MS_PER_TOKEN/ {print $2*1000}' "$D/time.txt")
  prof=$(awk '/PROFILE_TOTAL_US/ {print $2}' "$D/prof.txt")
  how=$(awk '/PROFILE_TIMING/ {print $2}' "$D/prof.txt")
  echo "$P graphs=$g rc=$rc timing=$how step_us=$step profile_total_us=$prof ratio=$(python3 -c "print(f'{$prof/$step:.3f}')" 2>/dev/null || echo '?')"
  [ $rc -eq 0 ] || head -5 "$D/prof.txt"
done
