#!/usr/bin/env bash
# The knob space's correctness on a GPU machine (issue #6): N points drawn from `lane-tune knobs` for each preset
# (numerics in turn, the other knobs drawn uniformly from the valid points), every one built (in parallel), checked
# as the first light checks (tokens equal or, for int8/int8x2, flips only at near ties; logits within the numerics' bound;
# bit for bit under --stagger with two seeds) and then timed: decode tok/s and prefill of a 512-token prompt.
# Prints a table of points, errors and speeds; exits 1 if any point fails its checks.
#
# usage: bench/sweep.sh LANE_TUNE_BINARY WORKDIR N PRESET...
#   FIRST=FILE: knob sets (one JSON object a line) taken before the drawn points, each over the defaults
#   SEED=N: the draws' seed (2026)
#   NUMERICS="a b": the numerics the slots take in turn (dequant int8 int8x2 precise)
#   FIXED=JSON: knobs every drawn point takes (e.g. {"kv_cache": "act"})
#   CONTEXT=N: lanes of N positions (knobs and compile --context; the checkpoint's trained context at least N)
#   TYPE=T: the checkpoints' matrix type (q8_0); a PRESET may be a shape's JSON file (lane-tune synth --shape)
#   BUILD_ONLY=1: compile and build the points, run nothing (a machine without a GPU: the kernels' instances compile)
set -uo pipefail
LT=$1; W=$2; N=$3; shift 3
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
TABLE="$W/sweep.txt"
: > "$TABLE"
fail=0
for SHAPE in "$@"; do
  P=$(label "$SHAPE")
  F=$(checkpoint "$LT" "$W" "$SHAPE")
  # The points: N slots (the FIRST sets, one a slot, then draws), numerics in turn (dequant, int8, int8x2, precise)
  # with FIXED, the rest drawn uniformly from the valid points (`lane-tune knobs --sample --where`: the constraints
  # refuse all but ~1 in 1,000 of the domains' product, so uniform draws of each knob would rarely make a point).
  : > "$W/$P.points"
  slot=0
  [ -n "${FIRST:-}" ] && while read -r KS; do
    [ -n "$KS" ] && [ $slot -lt "$N" ] && printf '%s\t%s\n' $slot "$KS" >> "$W/$P.points" && slot=$((slot + 1))
  done < "$FIRST"
  read -r -a order <<< "${NUMERICS:-dequant int8 int8x2 precise}"
  for ((; slot < N; slot++)); do
    # (the slot's numerics, or the next in the order that the checkpoint's space has: an f16 file has no int8)
    KS=
    for ((j = 0; j < ${#order[@]}; j++)); do
      where=$(python3 -c 'import json,sys; w=json.loads(sys.argv[2]); w["numerics"]=sys.argv[1]; print(json.dumps(w))' \
                "${order[$(((slot + j) % ${#order[@]}))]}" "${FIXED:-{\}}")
      KS=$("$LT" knobs "$F" ${CONTEXT:+--context "$CONTEXT"} --sample 1 --seed $((${SEED:-2026} * 1000 + slot)) --where "$where" 2> "$W/$P.draw.err") && break
      KS=
    done
    [ -n "$KS" ] || { printf '%-12s %s\n' "$P" "NO POINT: $(head -c 200 "$W/$P.draw.err")" | tee -a "$TABLE"; fail=1; continue; }
    printf '%s\t%s\n' $slot "$KS" >> "$W/$P.points"
  done
  # Compile each point, then build them all in parallel.
  : > "$W/$P.dirs"
  while IFS=$'\t' read -r slot KS; do
    D="$W/$P.pt$slot"
    echo "$KS" > "$W/$P.k$slot.json"
    if "$LT" compile "$F" --knobs "$W/$P.k$slot.json" ${CONTEXT:+--context "$CONTEXT"} -o "$D" > "$D.compile.log" 2>&1; then
      echo "$D" >> "$W/$P.dirs"
    else
      printf '%-12s %s\n' "$P" "COMPILE FAIL $(tail -c 200 "$D.compile.log") $KS" | tee -a "$TABLE"; fail=1
    fi
  done < "$W/$P.points"
  if [ "${BUILD_ONLY:-0}" = 1 ]; then
    build_all "$LT" "$W/$P.dirs"
    while read -r D; do
      if [ -x "$D/lane" ]; then r="built"; else r="BUILD FAIL"; fail=1; fi
      printf '%-16s %-10s %s\n' "$P" "$r" "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["knobs"],separators=(",",":")))' "$D/lane.json")" | tee -a "$TABLE"
    done < "$W/$P.dirs"
    continue
  fi
  V=$(vocab "$(head -1 "$W/$P.dirs")")
  prompts "$V" "$W/$P.prompts"
  P512=$(tokens "$V" 512 3)
  reference_prompts "$LT" "$F" "$W/$P.prompts" "$W/$P.ref" || fail=1
  build_all "$LT" "$W/$P.dirs"
  while read -r D; do
    KS=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["knobs"]))' "$D/lane.json")
    NUM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["knobs"]["numerics"])' "$D/lane.json")
    if [ ! -x "$D/lane" ]; then printf '%-12s %-8s %s\n' "$P" "$NUM" "BUILD FAIL $KS" | tee -a "$TABLE"; fail=1; continue; fi
    timeout 120 "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/out.bin" > "$D/out.txt" 2> "$D/run.err"
    rc=$?
    if [ $rc -ne 0 ]; then printf '%-12s %-8s %s\n' "$P" "$NUM" "RUN rc=$rc $(head -c 200 "$D/run.err") $KS" | tee -a "$TABLE"; fail=1; continue; fi
    cmp=$(python3 "$BENCH/compare_logits.py" "$W/$P.ref.bin" "$D/out.bin" "$V" $(judge_args "$D") \
          --ref-tokens "$W/$P.ref.txt" --out-tokens "$D/out.txt") || fail=1
    stag=ok
    for s in 1 2; do
      timeout 120 "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/st$s.bin" --stagger $s > /dev/null 2>&1 || stag="rc$?"
      cmp -s "$D/out.bin" "$D/st$s.bin" || { stag="DIFFERS"; fail=1; }
    done
    timeout 120 "$D/lane" "$F" "$D/lane.sidecar" 128 $P512 > "$D/time.txt" 2>&1
    pre=$(awk '/PREFILL_MS/ {printf "%.0f", 512000/$2}' "$D/time.txt")
    dec=$(awk '/DECODE_TOK_PER_S/ {printf "%.0f", $2}' "$D/time.txt")
    rel=$(echo "$cmp" | grep -o 'rel_l2=[^ ]*'); agr=$(echo "$cmp" | grep -o 'agree=[^ ]*'); tk=$(echo "$cmp" | grep -o 'tokens=[^ ]*'); vd=$(echo "$cmp" | grep -o 'verdict=[^ ]*')
    printf '%-12s %-8s %-18s %-13s %-16s %-12s stagger=%-7s decode=%-6s prefill=%-7s %s\n' "$P" "$NUM" "$rel" "$agr" "$tk" "$vd" "$stag" "$dec" "$pre" \
      "$(python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["knobs"]; k.pop("numerics"); print(json.dumps(k,separators=(",",":")))' "$D/lane.json")" | tee -a "$TABLE"
  done < "$W/$P.dirs"
done
echo "==== sweep"; cat "$TABLE"
exit $fail
