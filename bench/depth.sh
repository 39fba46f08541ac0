#!/usr/bin/env bash
# Long context side by side in one run (issue #19): lanes of CONTEXT positions under a few knob sets (the cache types,
# the attention kernels), each timed on a prompt of DEPTH tokens then 128 generated (decode at that depth) and on a
# prefill of SHORT tokens; the compact caches' logits at depth compared with the first set's (the f32 cache: the CPU
# reference cannot take 32k positions of an 8B in a bench's time), tokens and relative L2; llama.cpp's llama-bench on
# the same file (prefill SHORT and DEPTH at depth 0; tg128 at depth DEPTH with its f16 cache and with q8_0). The
# bound at depth counts the weights and the cache read a token. Prints a table last.
#
# (LLAMA_DECODE_ONLY=1: llama-bench's decode at depth only; LLAMA_CACHES: its cache types, default "f16 q8_0".)
#
# usage: [TYPE=q4_k_m] [DEPTH=32768] [SHORT=8192] [KNOB_SETS=$'{..}\n{..}'] bench/depth.sh LANE_TUNE WORKDIR
#        [LLAMA_BENCH] -- PRESET
set -uo pipefail
LT=$1; W=$2; LB=${3:-}; shift 3; [ "${1:-}" = "--" ] && shift
P=$1
. "$(dirname "$0")/common.sh"
DEPTH=${DEPTH:-32768}; SHORT=${SHORT:-8192}
CONTEXT=$((DEPTH + 256))
mkdir -p "$W"
TABLE="$W/depth.txt"
: > "$TABLE"
"$LT_NVCC" -O3 -arch=sm_90 -o "$W/bw" "$BENCH/bw.cu" && RATE=$("$W/bw" 8 | awk '/READ_TB_PER_S/ {print $2}')
echo "read-only streaming rate: ${RATE:-?} TB/s; depth $DEPTH, short prefill $SHORT, lanes of $CONTEXT positions" | tee -a "$TABLE"
F=$(checkpoint "$LT" "$W" "$P")
read -r BYTES KV_POS <<< "$("$LT" inspect "$F" --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
t = {x["name"]: x["bytes"] for x in j["tensors"]}
b = sum(v for k, v in t.items() if k != "token_embd.weight") + (t["token_embd.weight"] if "output.weight" not in t else 0)
h = j["hyperparameters"]
print(b, h["layers"] * h["kv_heads"] * h["head_dim"] * 2)')"
i=0; : > "$W/$P.dirs"
mapfile -t sets <<< "$KNOB_SETS"
for KS in "${sets[@]}"; do
  echo "${KS%\}},\"context\":$CONTEXT}" > "$W/$P.s$i.json"
  "$LT" compile "$F" --knobs "$W/$P.s$i.json" -o "$W/$P.s$i" > /dev/null && echo "$W/$P.s$i" >> "$W/$P.dirs"
  i=$((i + 1))
done
build_all "$LT" "$W/$P.dirs"
V=$(vocab "$W/$P.s0")
printf '128 %s\n' "$(tokens "$V" "$DEPTH" 3)" > "$W/$P.deep"
cat "$W/$P.deep" "$W/$P.deep" > "$W/$P.deep2"  # (timed twice in one process, the second taken: the first uploads graphs)
printf '1 %s\n1 %s\n' "$(tokens "$V" "$SHORT" 4)" "$(tokens "$V" "$SHORT" 4)" > "$W/$P.short"
first=""
while read -r D; do
  KS=$(python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["knobs"]; print(json.dumps(k, separators=(",",":")))' "$D/lane.json")
  KV=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["knobs"]["kv_cache"])' "$D/lane.json")
  [ -x "$D/lane" ] || { echo "$P BUILD FAIL $(grep -m3 error "$D.build.log")" | tee -a "$TABLE"; continue; }
  # (timed without --logits: the logits' copy back after every step, and the wait for it, would be timed too -- the
  # decode at depth was under-measured by ~25% so until session 30; the logits from a run of their own; the timing is
  # the second of two runs of the prompt in one process, as speed.sh takes its second)
  timeout 240 "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.deep2" > "$D/time.txt" 2> "$D/deep.err" &&
    timeout 240 "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.deep" --logits "$D/deep.bin" > "$D/deep.txt" 2>> "$D/deep.err" ||
    { echo "$P $KV RUN FAIL $(head -c 300 "$D/deep.err")" | tee -a "$TABLE"; continue; }
  pre=$(awk '/PREFILL_MS/ {v = $2} END {print v}' "$D/time.txt")
  dec=$(awk '/DECODE_TOK_PER_S/ {v=$2} END {print v}' "$D/time.txt")
  timeout 120 "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.short" > "$D/short.txt" 2>&1
  short=$(awk '/PREFILL_MS/ {n++; if (n == 2) printf "%.0f", '"$SHORT"' * 1000 / $2}' "$D/short.txt")
  cmp="(the first set: the comparison's base)"
  if [ -z "$first" ]; then first=$D; else
    cmp=$(python3 "$BENCH/compare_logits.py" "$first/deep.bin" "$D/deep.bin" "$V" --tol 3e-2 --tie 0.12 \
          --ref-tokens "$first/deep.txt" --out-tokens "$D/deep.txt" | grep -o 'rel_l2=[^ ]*\|tokens=[^ ]*\|verdict=[^ ]*' | tr '\n' ' ')
  fi
  eb=$(python3 -c "print({'act':4,'f16':2,'bf16':2,'q8_0':1.0625}['$KV'])")
  bound=$(python3 -c "print(f'{$RATE * 1e12 / ($BYTES + $KV_POS * $DEPTH * $eb):.0f}')" 2> /dev/null || echo "?")
  frac=$(python3 -c "print(f'{float(\"$dec\") / float(\"$bound\"):.2f}')" 2> /dev/null || echo "?")
  printf '%-13s kv=%-5s decode@%s %6s tok/s (bound %s, %s)  prefill(%s) %6s tok/s  prefill(%s) %s ms  %s  %s\n' \
    "$P" "$KV" "$DEPTH" "$dec" "$bound" "$frac" "$SHORT" "${short:-?}" "$DEPTH" "${pre:-?}" "$cmp" "$KS" | tee -a "$TABLE"
done < "$W/$P.dirs"
if [ -n "$LB" ] && [ -x "$LB" ]; then
  [ -n "${LLAMA_DECODE_ONLY:-}" ] ||
    timeout 200 "$LB" -m "$F" -p "$SHORT,$DEPTH" -n 0 -fa 1 -ngl 99 -r 1 -o md 2>&1 | grep -E '^\|' | tee -a "$TABLE"
  for c in ${LLAMA_CACHES:-f16 q8_0}; do
    timeout 150 "$LB" -m "$F" -p 0 -n 128 -d "$DEPTH" -fa 1 -ngl 99 -r 1 -ctk $c -ctv $c -o md 2>&1 | grep -E '^\||error' | tee -a "$TABLE"
  done
fi
echo "==== depth"; cat "$TABLE"
