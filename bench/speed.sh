#!/usr/bin/env bash
# Speed, side by side in one run (issue #6): for each preset, a few knob sets of lane-tune's lanes, each checked first
# against the CPU reference (tokens, logits within its numerics' bound, bit for bit under --stagger), then timed:
# decode tok/s at batch 1 (128 tokens after a 5-token prompt) and prefill tok/s (a 512-token prompt), medians of 3;
# decode as a fraction of the bandwidth bound (bytes read a token over the read-only rate measured here by bench/bw.cu);
# llama.cpp's llama-bench (pp512, tg128, flash attention, all layers on the GPU) on the same file; the per-launch
# profile of the fastest valid decode, by kind. Prints a table last.
#
# usage: bench/speed.sh LANE_TUNE_BINARY WORKDIR [LLAMA_BENCH] -- PRESET...
set -uo pipefail
LT=$1; W=$2; LB=${3:-}; shift 3; [ "${1:-}" = "--" ] && shift
HERE=$(cd "$(dirname "$0")" && pwd)
export LT_NVCC=${LT_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$W"
TABLE="$W/speed.txt"
: > "$TABLE"
"$LT_NVCC" -O3 -arch=sm_90 -o "$W/bw" "$HERE/bw.cu" && RATE=$("$W/bw" 8 | awk '/READ_TB_PER_S/ {print $2}')
echo "read-only streaming rate: ${RATE:-?} TB/s (bench/bw.cu, 8 GB, best of 7)" | tee -a "$TABLE"
SETS=(
  '{}'
  '{"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64}'
  '{"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"int8x2","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"int8x2","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemm_rows":32}'
)
med() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x]; print(f"{statistics.median(v):.0f}" if v else "?")' "$@"; }
for P in "$@"; do
  F="$W/$P.gguf"
  [ -f "$F" ] || "$LT" synth --preset "$P" --type q8_0 --seed 1 -o "$F" > /dev/null
  BYTES=$("$LT" inspect "$F" --json | python3 -c '
import json, sys
t = {x["name"]: x["bytes"] for x in json.load(sys.stdin)["tensors"]}
b = sum(v for k, v in t.items() if k != "token_embd.weight")
print(b + (t["token_embd.weight"] if "output.weight" not in t else 0))')
  # Lanes compiled, then built in parallel while the CPU reference runs.
  i=0; : > "$W/$P.dirs"
  for KS in "${SETS[@]}"; do
    echo "$KS" > "$W/$P.s$i.json"
    "$LT" compile "$F" --knobs "$W/$P.s$i.json" -o "$W/$P.s$i" > /dev/null && echo "$W/$P.s$i" >> "$W/$P.dirs"
    i=$((i + 1))
  done
  V=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab"])' "$W/$P.s0/lane.json")
  python3 -c "import random; r=random.Random(7); print('8 ' + ' '.join(str(r.randrange($V)) for _ in range(5)))" > "$W/$P.prompts"
  P5=$(cut -d' ' -f2- "$W/$P.prompts")
  P512=$(python3 -c "import random; r=random.Random(3); print(' '.join(str(r.randrange($V)) for _ in range(512)))")
  xargs -P "$(nproc)" -I{} sh -c '"$0" build {} --arch sm_90 > {}.build.log 2>&1 || echo BUILD_FAIL {}' "$LT" < "$W/$P.dirs" &
  BUILDS=$!
  "$LT" reference "$F" --n-gen 8 --logits "$W/$P.ref.bin" $P5 > "$W/$P.ref.txt"
  wait $BUILDS
  best=""; bestdec=0
  while read -r D; do
    KS=$(python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["knobs"]; print(json.dumps({a:b for a,b in k.items()}, separators=(",",":")))' "$D/lane.json")
    NUM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["knobs"]["numerics"])' "$D/lane.json")
    case $NUM in precise) tol=1e-6 tie=0 ;; dequant) tol=1e-4 tie=0 ;; int8) tol=3e-2 tie=0.12 ;; int8x2) tol=1e-3 tie=0.004 ;; esac
    [ -x "$D/lane" ] || { echo "$P $NUM BUILD FAIL $(grep -m3 error "$D.build.log")" | tee -a "$TABLE"; continue; }
    "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/out.bin" > "$D/out.txt" 2> "$D/err.txt" ||
      { echo "$P $NUM RUN FAIL $(head -c 200 "$D/err.txt")" | tee -a "$TABLE"; continue; }
    cmp=$(python3 "$HERE/compare_logits.py" "$W/$P.ref.bin" "$D/out.bin" "$V" --tol $tol --tie $tie \
          --ref-tokens "$W/$P.ref.txt" --out-tokens "$D/out.txt")
    "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/st.bin" --stagger 1 > /dev/null 2>&1
    cmp -s "$D/out.bin" "$D/st.bin" && stag=ok || stag=DIFFERS
    dec=(); pre=()
    for r in 1 2 3; do
      dec+=("$("$D/lane" "$F" "$D/lane.sidecar" 128 $P5 | awk '/DECODE_TOK_PER_S/ {print $2}')")
      pre+=("$("$D/lane" "$F" "$D/lane.sidecar" 1 $P512 | awk '/PREFILL_MS/ {print 512000/$2}')")
    done
    d=$(med "${dec[@]}"); p=$(med "${pre[@]}")
    frac=$(python3 -c "print(f'{$d * $BYTES / ($RATE * 1e12):.2f}')" 2> /dev/null || echo "?")
    ok=$([[ $cmp == *verdict=ok* && $stag == ok ]] && echo ok || echo FAIL)
    printf '%-13s %-7s decode %6s tok/s (%s of the bound)  prefill(512) %6s tok/s  check=%s %s stagger=%s  %s\n' \
      "$P" "$NUM" "$d" "$frac" "$p" "$ok" "$(echo "$cmp" | grep -o 'rel_l2=[^ ]*')" "$stag" "$KS" | tee -a "$TABLE"
    if [ "$ok" = ok ] && python3 -c "import sys; sys.exit(0 if float('$d') > float('$bestdec') else 1)" 2> /dev/null; then
      best=$D; bestdec=$d
    fi
  done < "$W/$P.dirs"
  echo "$P: $BYTES bytes read a token (the weights but the embedding table); bound $(python3 -c "print(f'{$RATE * 1e12 / $BYTES:.0f}')" 2> /dev/null) tok/s" | tee -a "$TABLE"
  if [ -n "$best" ]; then
    "$best/lane" "$F" "$best/lane.sidecar" 128 $P5 --profile > "$W/$P.profile.txt"
    python3 - "$W/$P.profile.txt" "$P" <<'PY' | tee -a "$TABLE"
import collections, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith("PROFILE: ")]
total = sum(float(r[3]) for r in rows)
by = collections.defaultdict(lambda: [0, 0.0])
for r in rows:
    kind = r[1] + (" (logits)" if r[2] == "logits" else "")
    by[kind][0] += 1
    by[kind][1] += float(r[3])
step = [l.split()[1] for l in open(sys.argv[1]) if l.startswith("DECODE_MS_PER_TOKEN")]
print(f"{sys.argv[2]} profile of the fastest valid decode: {len(rows)} launches, {total:.0f} us a step "
      f"(unprofiled step {float(step[0]) * 1000 if step else 0:.0f} us)")
for k, (n, us) in sorted(by.items(), key=lambda x: -x[1][1]):
    print(f"  {k:22s} {n:4d} launches {us:8.1f} us {100 * us / total:5.1f}%  {us / n:6.2f} us each")
PY
  fi
  if [ -n "$LB" ] && [ -x "$LB" ]; then
    "$LB" -m "$F" -p 512 -n 128 -fa 1 -ngl 99 -r 3 -o md 2>&1 | grep -E '^\|' | tee -a "$TABLE"
  fi
done
echo "==== speed"; cat "$TABLE"
