#!/usr/bin/env bash
# The knob space's correctness on a GPU machine (issue #6): N points drawn from `lane-tune knobs` for each preset
# (numerics in turn, the other knobs at random; invalid draws redrawn), every one built (in parallel), checked as the
# first light checks (tokens equal or, for int8/int8x2, flips only at near ties; logits within the numerics' bound;
# bit for bit under --stagger with two seeds) and then timed: decode tok/s and prefill of a 512-token prompt.
# Prints a table of points, errors and speeds; exits 1 if any point fails its checks.
#
# usage: bench/sweep.sh LANE_TUNE_BINARY WORKDIR N PRESET...
#   FIRST=FILE: knob sets (one JSON object a line) taken before the drawn points, each over the defaults
#   SEED=N: the draws' seed (2026)
set -uo pipefail
LT=$1; W=$2; N=$3; shift 3
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
TABLE="$W/sweep.txt"
: > "$TABLE"
fail=0
for P in "$@"; do
  F=$(checkpoint "$LT" "$W" "$P")
  "$LT" knobs "$F" --json > "$W/$P.space.json"
  # The points: N slots (the FIRST sets, one a slot, then draws), numerics in turn (dequant, int8, int8x2, precise)
  # and the rest drawn; a drawn slot has spares, since the constraints refuse most uniform draws, and the first one
  # lane-tune compile accepts fills it.
  python3 - "$W/$P.space.json" "$N" "$W/$P.points" "${FIRST:-}" "${SEED:-2026}" <<'PY'
import json, random, sys
space, n, out = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
rng = random.Random(int(sys.argv[5]))
order = ["dequant", "int8", "int8x2", "precise"]
first = [json.loads(l) for l in open(sys.argv[4]) if l.strip()] if sys.argv[4] else []
with open(out, "w") as f:
    for slot in range(n):
        if slot < len(first):
            f.write(f"{slot}\t{json.dumps(first[slot], sort_keys=True)}\n")
            continue
        for _ in range(60):
            k = {d["name"]: rng.choice(d["values"]) for d in space["knobs"]}
            k["numerics"] = order[slot % len(order)]
            f.write(f"{slot}\t{json.dumps(k, sort_keys=True)}\n")
PY
  # Compile each slot's first accepted point, then build them all in parallel.
  : > "$W/$P.dirs"
  filled=-1
  while IFS=$'\t' read -r slot KS; do
    [ "$slot" -gt "$filled" ] || continue
    D="$W/$P.pt$slot"
    echo "$KS" > "$W/$P.k$slot.json"
    if "$LT" compile "$F" --knobs "$W/$P.k$slot.json" -o "$D" > /dev/null 2>&1; then echo "$D" >> "$W/$P.dirs"; filled=$slot; fi
  done < "$W/$P.points"
  V=$(vocab "$(head -1 "$W/$P.dirs")")
  prompts "$V" "$W/$P.prompts"
  P512=$(tokens "$V" 512 3)
  reference_prompts "$LT" "$F" "$W/$P.prompts" "$W/$P.ref" || fail=1
  build_all "$LT" "$W/$P.dirs"
  while read -r D; do
    KS=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["knobs"]))' "$D/lane.json")
    NUM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["knobs"]["numerics"])' "$D/lane.json")
    case $NUM in precise) tol=1e-6 tie=0 ;; dequant) tol=1e-4 tie=0 ;; int8) tol=3e-2 tie=0.12 ;; int8x2) tol=1e-3 tie=0.004 ;; esac
    if [ ! -x "$D/lane" ]; then printf '%-12s %-8s %s\n' "$P" "$NUM" "BUILD FAIL $KS" | tee -a "$TABLE"; fail=1; continue; fi
    timeout 120 "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/out.bin" > "$D/out.txt" 2> "$D/run.err"
    rc=$?
    if [ $rc -ne 0 ]; then printf '%-12s %-8s %s\n' "$P" "$NUM" "RUN rc=$rc $(head -c 200 "$D/run.err") $KS" | tee -a "$TABLE"; fail=1; continue; fi
    cmp=$(python3 "$BENCH/compare_logits.py" "$W/$P.ref.bin" "$D/out.bin" "$V" --tol $tol --tie $tie --min-agree 0.99 \
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
