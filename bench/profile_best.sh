#!/usr/bin/env bash
# The per-launch profile of given knob sets on one preset: a 512-token prompt prefilled twice and 128 tokens generated
# twice, once unprofiled (the step's time) and once under --profile (CUPTI's kernel stamps); prints the decode step's
# and the largest prefill chunk's launches by kind (bench/profile_table.py) and the profile's total against the step.
#
# usage: bench/profile_best.sh LANE_TUNE_BINARY WORKDIR PRESET KNOBS_JSON...
set -uo pipefail
LT=$1; W=$2; P=$3; shift 3
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$LT" "$W" "$P")
i=0
for KS in "$@"; do
  echo "$KS" > "$W/k$i.json"
  "$LT" compile "$F" --knobs "$W/k$i.json" -o "$W/p$i" > /dev/null && echo "$W/p$i"
  i=$((i + 1))
done > "$W/dirs"
build_all "$LT" "$W/dirs"
V=$(vocab "$(head -1 "$W/dirs")")
P512=$(tokens "$V" 512 3); P5=$(tokens "$V" 5 7)
printf '1 %s\n1 %s\n128 %s\n128 %s\n' "$P512" "$P512" "$P5" "$P5" > "$W/timing"
while read -r D; do
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/timing" > "$D/plain.txt" 2>&1
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/timing" --profile > "$D/prof.txt" 2>&1 || { echo "$D: --profile failed: $(tail -2 "$D/prof.txt")"; continue; }
  python3 "$BENCH/profile_table.py" "$D/prof.txt" "$P" decode "$D/lane.json"
  python3 "$BENCH/profile_table.py" "$D/prof.txt" "$P" prefill "$D/lane.json"
  step=$(awk '/DECODE_MS_PER_TOKEN/ {v=$2} END {print v * 1000}' "$D/plain.txt")
  pre=$(awk '/PREFILL_MS/ {n++; if (n == 2) print $2 * 1000}' "$D/plain.txt")
  tot=$(awk '/PROFILE_TOTAL_US/ {print $2}' "$D/prof.txt")
  read -r rows chunk < <(awk '/PROFILE_CHUNK_TOTAL_US/ {if ($2 > r) {r = $2; v = $3}} END {print r, v}' "$D/prof.txt")
  echo "$P: decode step ${step} us unprofiled, profile total ${tot} us (ratio $(python3 -c "print(f'{$tot/$step:.3f}')" 2>/dev/null)); prefill(512) ${pre} us unprofiled, $((512 / rows)) chunks of $rows by the profile $(python3 -c "print(f'{512 / $rows * $chunk:.0f}')" 2>/dev/null) us"
done < "$W/dirs"
