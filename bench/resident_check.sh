#!/usr/bin/env bash
# The tuner's measurement against the release's (issue #14), side by side in one run: each configuration measured
# as a release runs (its own program, lane.cu built with nvcc, mapping and uploading the checkpoint itself) and as a
# tuning job measures it (`lane-tune measure`: the weights resident in one process, the kernels from the module cache,
# everything in one request). The logits must be the same bit for bit (the same kernels on the same arguments), the
# times within noise. Also the cost of each configuration both ways: a standalone process's wall time against the
# resident request's, and the kernels the cache built for it.
#
# usage: bench/resident_check.sh LANE_TUNE WORKDIR PRESET...   (CONFIGS: a file of knob sets, a JSON object a line)
set -uo pipefail
LT=$1; W=$2; shift 2
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
TABLE="$W/resident.txt"
: > "$TABLE"
CONFIGS=${CONFIGS:-$BENCH/points-s4.jsonl}
REPEAT=${REPEAT:-5}
med() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x]; print(f"{statistics.median(v):.4f}" if v else "?")' "$@"; }
for P in "$@"; do
  F=$(checkpoint "$LT" "$W" "$P")
  i=0; : > "$W/$P.dirs"
  while read -r KS; do
    [ -n "$KS" ] || continue
    echo "$KS" > "$W/$P.k$i.json"
    "$LT" compile "$F" --knobs "$W/$P.k$i.json" -o "$W/$P.k$i" > /dev/null && echo "$W/$P.k$i" >> "$W/$P.dirs"
    i=$((i + 1))
  done < "$CONFIGS"
  V=$(vocab "$W/$P.k0")
  PROMPT_LENS="5 40" prompts "$V" "$W/$P.prompts" 8
  # The standalone programs build (nvcc, every core) while the resident path builds its host and modules.
  t0=$(date +%s.%N)
  build_all "$LT" "$W/$P.dirs" > "$W/$P.build.txt" &
  BUILDS=$!
  # One request a configuration, one resident host for them all (the weights uploaded once).
  args=(); while read -r D; do args+=(--knobs "${D}.json"); done < "$W/$P.dirs"
  n=${#args[@]}; n=$((n / 2))
  "$LT" measure "$F" "${args[@]}" --prompts "$W/$P.prompts" --workload 512,128 --warmup 1 --repeat "$REPEAT" \
    --cache "$W/cache" --json > "$W/$P.resident.json" 2> "$W/$P.resident.err"
  echo "resident: $n configurations in $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$(date +%s.%N)") s (host and modules built, weights uploaded once)" | tee -a "$TABLE"
  wait $BUILDS
  echo "standalone builds: $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$(date +%s.%N)") s for $n lanes on $(nproc) cores" | tee -a "$TABLE"
  printf '%-4s %-10s %-10s %-10s %-10s %-9s %-9s %-7s %s\n' "$P" "dec(res)" "dec(alone)" "pre(res)" "pre(alone)" "wall res" "wall alone" "hash" "knobs" | tee -a "$TABLE"
  j=0
  while read -r D; do
    j=$((j + 1))
    t1=$(date +%s.%N)
    "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/alone.f32" --workload 512,128 --warmup 1 \
      --repeat "$REPEAT" > "$D/alone.out" 2> "$D/alone.err"
    rc=$?
    wall=$(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$t1" "$(date +%s.%N)")
    ad=$(med $(awk '/^WORKLOAD:/ {print $6}' "$D/alone.out"))
    ap=$(med $(awk '/^WORKLOAD:/ {print $5}' "$D/alone.out"))
    ah=$(awk '/^LOGITS_HASH:/ {print $2}' "$D/alone.out")
    read -r rd rp rh rv rw <<< "$(python3 "$BENCH/resident_row.py" "$W/$P.resident.json" "$j" 2> /dev/null || echo "? ? ? 0 ?")"
    same=$([ "$rh" = "$ah" ] && echo same || echo DIFFERS)
    printf '%-4s %-10s %-10s %-10s %-10s %-9s %-9s %-7s %s\n' "$rc" "$rd" "$ad" "$rp" "$ap" "$rw" "$wall" "$same" "$(cat "${D}.json")" | tee -a "$TABLE"
  done < "$W/$P.dirs"
done
echo "(dec: decode ms a token, pre: prefill(512) ms, medians of $REPEAT; wall res: the resident request; wall alone: the standalone process, upload included)" | tee -a "$TABLE"
