#!/usr/bin/env bash
# The lane's first light on a GPU machine: for each preset, the CPU reference, then lanes under several knob sets,
# each checked (tokens equal, logits within tolerance, bit for bit under --stagger, --profile's total against the
# step, exit 3 on a wrong checkpoint or sidecar) before it is timed. Prints a table last.
#
# usage: bench/first_light.sh LANE_TUNE_BINARY WORKDIR [PRESET...]
# The binary is built on a development machine (it needs no GPU); nvcc and the GPU are used here.
set -uo pipefail
LT=$1; W=$2; shift 2
PRESETS=${*:-tiny-llama tiny-qwen2 tiny-qwen3 qwen3-0.6b llama-3.2-1b}
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
TABLE="$W/table.txt"
: > "$TABLE"
fail=0
row() { printf '%-14s %-44s %s\n' "$1" "$2" "$3" | tee -a "$TABLE"; }

# The knob sets each preset's lanes are built with (the chunks up to 256 rows: the longest prompt, 300, passes them).
SETS=(
  '{"numerics":"precise"}'
  '{"numerics":"dequant"}'
  '{"numerics":"dequant","cuda_graphs":false,"gemv_rows_per_warp":2,"gemv_warps":4,"attn_splits":1,"max_chunk":4}'
  '{"numerics":"dequant","gemv_rows_per_warp":4,"attn_splits":16,"max_chunk":64}'
  '{"numerics":"dequant","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"gemv_rows_per_warp":2,"gemv_split":2}'
  '{"numerics":"precise","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256}'
)
for P in $PRESETS; do
  F="$W/$P.gguf"
  "$LT" synth --preset "$P" --type q8_0 --seed 1 -o "$F" > /dev/null || { row "$P" synth FAIL; fail=1; continue; }
  "$LT" compile "$F" -o "$W/$P.probe" > /dev/null || { row "$P" compile FAIL; fail=1; continue; }
  V=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab"])' "$W/$P.probe/lane.json")
  prompts "$V" "$W/$P.prompts"
  # The lanes compiled, then built in parallel while the reference runs, prompt by prompt.
  : > "$W/$P.dirs"
  for KS in "${SETS[@]}"; do
    D="$W/$P.lane.$(echo "$KS" | md5sum | cut -c1-8)"
    echo "$KS" > "$D.json"
    if "$LT" compile "$F" --knobs "$D.json" -o "$D" > /dev/null 2> "$D.err"; then echo "$D" >> "$W/$P.dirs"; fi
  done
  build_all "$LT" "$W/$P.dirs" > /dev/null &
  BUILDS=$!
  t0=$(date +%s.%N)
  reference_prompts "$LT" "$F" "$W/$P.prompts" "$W/$P.ref" || fail=1
  row "$P" "reference ($(python3 -c "print(round($(date +%s.%N)-$t0,1))") s)" "$(tr '\n' '|' < "$W/$P.ref.txt" | cut -c1-60)"
  wait $BUILDS
  for KS in "${SETS[@]}"; do
    D="$W/$P.lane.$(echo "$KS" | md5sum | cut -c1-8)"
    tol=1e-4; [[ $KS == *precise* ]] && tol=1e-6
    if [ ! -d "$D" ]; then row "$P" "$KS" "compile FAIL $(head -c 200 "$D.err")"; fail=1; continue; fi
    if [ ! -x "$D/lane" ]; then row "$P" "$KS" "nvcc FAIL"; head -30 "$D.build.log"; fail=1; continue; fi
    timeout 120 "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/out.bin" > "$D/out.txt" 2> "$D/run.err"
    rc=$?
    if [ $rc -ne 0 ]; then row "$P" "$KS" "run rc=$rc $(head -c 300 "$D/run.err")"; fail=1; continue; fi
    cmp=$(python3 "$BENCH/compare_logits.py" "$W/$P.ref.bin" "$D/out.bin" "$V" --tol $tol --ref-tokens "$W/$P.ref.txt" --out-tokens "$D/out.txt") || fail=1
    stag=ok
    for s in 1 2 3; do
      timeout 120 "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/st$s.bin" --stagger $s > /dev/null 2>&1 || stag="rc$?"
      cmp -s "$D/out.bin" "$D/st$s.bin" || { stag="DIFFERS(seed $s)"; fail=1; }
    done
    # --profile: the decode step's launches summed, against the step's time unprofiled (its own long run).
    timeout 60 "$D/lane" "$F" "$D/lane.sidecar" 64 1 2 3 > "$D/time.txt" 2>&1
    timeout 60 "$D/lane" "$F" "$D/lane.sidecar" 64 1 2 3 --profile > "$D/prof.txt" 2>&1
    step=$(awk '/DECODE_MS_PER_TOKEN/ {print $2*1000}' "$D/time.txt")
    prof=$(awk '/PROFILE_TOTAL_US/ {print $2}' "$D/prof.txt")
    pr=$(python3 -c "print(f'{$prof/$step:.2f}')" 2>/dev/null || echo "?")
    row "$P" "$KS" "${cmp#COMPARE: } stagger=$stag profile/step=$pr step_us=$step"
  done
  # A wrong checkpoint and a wrong sidecar exit 3.
  # (Another preset: a file of the same preset and another seed has the same header, the identity the lane checks.)
  other="$W/other.gguf"; op=tiny-qwen2; [ "$P" = tiny-qwen2 ] && op=tiny-llama
  "$LT" synth --preset $op --seed 9 -o "$other" > /dev/null
  "$D/lane" "$other" "$D/lane.sidecar" 2 1 > /dev/null 2>&1; a=$?
  "$D/lane" "$F" "$D/lane.json" 2 1 > /dev/null 2>&1; b=$?
  row "$P" "wrong checkpoint / sidecar exit codes" "$a / $b (want 3 / 3)"
  [ $a -eq 3 ] && [ $b -eq 3 ] || fail=1
done

# A first figure: qwen3-0.6b decode and prefill under the default knobs.
if [ -f "$W/qwen3-0.6b.gguf" ]; then
  F="$W/qwen3-0.6b.gguf"; D="$W/fig"
  "$LT" compile "$F" -o "$D" > /dev/null && "$LT" build "$D" --arch sm_90 > /dev/null
  P512=$(python3 -c "import random; r=random.Random(3); print(' '.join(str(r.randrange(150000)) for _ in range(512)))")
  for i in 1 2 3; do "$D/lane" "$F" "$D/lane.sidecar" 128 $P512 > "$D/fig$i.txt"; done
  python3 - "$D" <<'PY' | tee -a "$TABLE"
import statistics, sys
d = sys.argv[1]
pre, dec = [], []
for i in (1, 2, 3):
    for l in open(f"{d}/fig{i}.txt"):
        if l.startswith("PREFILL_MS:"): pre.append(512 / float(l.split()[1]) * 1000)
        if l.startswith("DECODE_TOK_PER_S:"): dec.append(float(l.split()[1]))
print(f"qwen3-0.6b default knobs: prefill(512) {statistics.median(pre):.0f} tok/s, decode {statistics.median(dec):.0f} tok/s (median of 3)")
PY
fi
echo "==== table"; cat "$TABLE"
exit $fail
