#!/usr/bin/env bash
# --profile against the step: for one preset, lanes with graphs on and off; the decode step's time unprofiled and the
# per-launch profile's total, each the median of REPS processes run in turn (an uncaptured step is the host's launch
# rate, which moves ~15% from one process to the next). The issue's bound: the total within 10% of the step.
# A last line per lane: the step unprofiled with CUPTI's library preloaded (whether loading it alone slows launches).
#
# usage: [REPS=5] bench/profile_check.sh LANE_TUNE_BINARY WORKDIR PRESET
set -uo pipefail
LT=$1; W=$2; P=$3; REPS=${REPS:-5}
export LT_NVCC=${LT_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$W"
F="$W/$P.gguf"
[ -f "$F" ] || "$LT" synth --preset "$P" --type q8_0 --seed 1 -o "$F" > /dev/null
med() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x]; print(f"{statistics.median(v):.1f}" if v else "nan")' "$@"; }
CUPTI=$(ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so /usr/local/cuda/lib64/libcupti.so 2> /dev/null | head -1)
for g in true false; do
  D="$W/$P.prof.$g"
  echo "{\"cuda_graphs\":$g}" > "$W/k.json"
  "$LT" compile "$F" --knobs "$W/k.json" -o "$D" > /dev/null && "$LT" build "$D" --arch sm_90 > /dev/null || { echo "$P graphs=$g build FAIL"; continue; }
  steps=(); profs=(); rc=0; how=""
  for r in $(seq "$REPS"); do
    "$D/lane" "$F" "$D/lane.sidecar" 64 1 2 3 > "$D/time.txt" 2>&1
    "$D/lane" "$F" "$D/lane.sidecar" 64 1 2 3 --profile > "$D/prof.txt" 2>&1 || { rc=$?; head -5 "$D/prof.txt"; }
    steps+=("$(awk '/DECODE_MS_PER_TOKEN/ {print $2*1000}' "$D/time.txt")")
    profs+=("$(awk '/PROFILE_TOTAL_US/ {print $2}' "$D/prof.txt")")
    how=$(awk '/PROFILE_TIMING/ {print $2}' "$D/prof.txt")
  done
  step=$(med "${steps[@]}"); prof=$(med "${profs[@]}")
  echo "$P graphs=$g rc=$rc timing=$how step_us=$step profile_total_us=$prof ratio=$(python3 -c "print(f'{$prof/$step:.3f}')" 2>/dev/null || echo '?') (medians of $REPS; steps ${steps[*]}; totals ${profs[*]})"
  grep -h "launch_gaps" "$D/prof.txt" | head -1
  if [ -n "$CUPTI" ]; then
    pre=()
    for r in 1 2 3; do pre+=("$(LD_PRELOAD=$CUPTI "$D/lane" "$F" "$D/lane.sidecar" 64 1 2 3 2>&1 | awk '/DECODE_MS_PER_TOKEN/ {print $2*1000}')"); done
    echo "$P graphs=$g step_us with $CUPTI preloaded: $(med "${pre[@]}") (${pre[*]})"
  fi
done
