#!/usr/bin/env bash
# Speed, side by side in one run (issue #6): for each preset, a few knob sets of lane-tune's lanes, each checked first
# against the CPU reference (tokens, logits within its numerics' bound, bit for bit under --stagger), then timed:
# decode tok/s at batch 1 (128 tokens after a 5-token prompt) and prefill tok/s (a 512-token prompt), medians of 3;
# decode as a fraction of the bandwidth bound (bytes read a token over the read-only rate measured here by bench/bw.cu);
# llama.cpp's llama-bench (pp512, tg128, flash attention, all layers on the GPU) on the same file; the per-launch
# profile of the fastest valid decode, by kind. Prints a table last.
#
# usage: [TYPE=q4_k_m] [KNOB_SETS=$'{..}\n{..}'] bench/speed.sh LANE_TUNE_BINARY WORKDIR [LLAMA_BENCH] -- PRESET...
set -uo pipefail
LT=$1; W=$2; LB=${3:-}; shift 3; [ "${1:-}" = "--" ] && shift
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
TABLE="$W/speed.txt"
: > "$TABLE"
"$LT_NVCC" -O3 -arch=sm_90 -o "$W/bw" "$BENCH/bw.cu" && RATE=$("$W/bw" 8 | awk '/READ_TB_PER_S/ {print $2}')
echo "read-only streaming rate: ${RATE:-?} TB/s (bench/bw.cu, 8 GB, best of 7)" | tee -a "$TABLE"
SETS=(
  '{}'
  '{"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64}'
  '{"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"int8x2","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"int8x2","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256,"pdl":true,"gemm_prequant":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemm_prequant":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256,"pdl":true,"gemm_prequant":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256,"pdl":true,"gemm_prequant":true,"gemv_prequant":true}'
)
med() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x]; print(f"{statistics.median(v):.0f}" if v else "?")' "$@"; }
for P in "$@"; do
  F=$(checkpoint "$LT" "$W" "$P")
  BYTES=$("$LT" inspect "$F" --json | python3 -c '
import json, sys
t = {x["name"]: x["bytes"] for x in json.load(sys.stdin)["tensors"]}
b = sum(v for k, v in t.items() if k != "token_embd.weight")
print(b + (t["token_embd.weight"] if "output.weight" not in t else 0))')
  # Lanes compiled, then built in parallel while the CPU reference runs.
  i=0; : > "$W/$P.dirs"
  sets=("${SETS[@]}")
  # The 8B: its GEMVs 2 rows a warp (the activations read once for 2 rows), int8 with and without the activations
  # quantized once for the decode GEMVs and the prefill GEMMs.
  rpw() { echo "${1%\}},\"gemv_rows_per_warp\":$2}"; }
  case $P in *8b*) sets=("$(rpw "${SETS[2]}" 2)" "$(rpw "${SETS[4]}" 2)" "$(rpw "${SETS[4]%\}},\"gemv_prequant\":true}" 2)"
                         "$(rpw "${SETS[8]}" 2)" "$(rpw "${SETS[8]}" 4)") ;; esac
  # KNOB_SETS (one JSON object a line): these sets for every preset instead.
  [ -n "${KNOB_SETS:-}" ] && mapfile -t sets <<< "$KNOB_SETS"
  for KS in "${sets[@]}"; do
    echo "$KS" > "$W/$P.s$i.json"
    "$LT" compile "$F" --knobs "$W/$P.s$i.json" -o "$W/$P.s$i" > /dev/null && echo "$W/$P.s$i" >> "$W/$P.dirs"
    i=$((i + 1))
  done
  V=$(vocab "$W/$P.s0")
  P5=$(tokens "$V" 5 7)
  # The check: a 5-token prompt (decode's GEMVs) and one past the largest chunk (the tensor cores' chunks; 40 tokens
  # on the 8B, whose f64 reference takes ~1 s a token), 8 tokens generated each.
  case $P in *8b*) PROMPT_LENS="5 40" ;; *) PROMPT_LENS="5 300" ;; esac
  PROMPT_LENS=$PROMPT_LENS prompts "$V" "$W/$P.prompts" 8
  P512=$(tokens "$V" 512 3)
  printf '1 %s\n1 %s\n128 %s\n128 %s\n' "$P512" "$P512" "$P5" "$P5" > "$W/$P.timing"
  build_all "$LT" "$W/$P.dirs" &
  BUILDS=$!
  reference_prompts "$LT" "$F" "$W/$P.prompts" "$W/$P.ref"
  wait $BUILDS
  best=""; bestdec=0; bestpre=""; bestp=0
  while read -r D; do
    KS=$(python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["knobs"]; print(json.dumps({a:b for a,b in k.items()}, separators=(",",":")))' "$D/lane.json")
    NUM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["knobs"]["numerics"])' "$D/lane.json")
    [ -x "$D/lane" ] || { echo "$P $NUM BUILD FAIL $(grep -m3 error "$D.build.log")" | tee -a "$TABLE"; continue; }
    "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/out.bin" > "$D/out.txt" 2> "$D/err.txt" ||
      { echo "$P $NUM RUN FAIL $(head -c 200 "$D/err.txt")" | tee -a "$TABLE"; continue; }
    cmp=$(python3 "$BENCH/compare_logits.py" "$W/$P.ref.bin" "$D/out.bin" "$V" $(judge_args "$D") \
          --ref-tokens "$W/$P.ref.txt" --out-tokens "$D/out.txt")
    "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$D/st.bin" --stagger 1 > /dev/null 2>&1
    cmp -s "$D/out.bin" "$D/st.bin" && stag=ok || stag=DIFFERS
    # Timing: each process prefills the 512-token prompt twice and generates 128 tokens twice; the second of each
    # (warm: the first carries the graphs' upload) is taken, over 3 processes.
    dec=(); pre=()
    for r in 1 2 3; do
      "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.timing" > "$D/t$r.txt"
      dec+=("$(awk '/DECODE_TOK_PER_S/ {v=$2} END {print v}' "$D/t$r.txt")")
      pre+=("$(awk '/PREFILL_MS/ {n++; if (n == 2) print 512000/$2}' "$D/t$r.txt")")
    done
    d=$(med "${dec[@]}"); p=$(med "${pre[@]}")
    frac=$(python3 -c "print(f'{$d * $BYTES / ($RATE * 1e12):.2f}')" 2> /dev/null || echo "?")
    ok=$([[ $cmp == *verdict=ok* && $stag == ok ]] && echo ok || echo FAIL)
    printf '%-13s %-7s decode %6s tok/s (%s of the bound)  prefill(512) %6s tok/s  check=%s %s stagger=%s  %s\n' \
      "$P" "$NUM" "$d" "$frac" "$p" "$ok" "$(echo "$cmp" | grep -o 'rel_l2=[^ ]*')" "$stag" "$KS" | tee -a "$TABLE"
    if [ "$ok" = ok ] && python3 -c "import sys; sys.exit(0 if float('$d') > float('$bestdec') else 1)" 2> /dev/null; then
      best=$D; bestdec=$d
    fi
    if [ "$ok" = ok ] && python3 -c "import sys; sys.exit(0 if float('$p') > float('$bestp') else 1)" 2> /dev/null; then
      bestpre=$D; bestp=$p
    fi
  done < "$W/$P.dirs"
  echo "$P: $BYTES bytes read a token (the weights but the embedding table); bound $(python3 -c "print(f'{$RATE * 1e12 / $BYTES:.0f}')" 2> /dev/null) tok/s" | tee -a "$TABLE"
  for which in decode prefill; do
    B=$best; [ $which = prefill ] && B=$bestpre
    [ -n "$B" ] || continue
    "$B/lane" "$F" "$B/lane.sidecar" --prompts "$W/$P.timing" --profile > "$W/$P.profile.$which.txt"
    python3 "$BENCH/profile_table.py" "$W/$P.profile.$which.txt" "$P" "$which" "$B/lane.json" | tee -a "$TABLE"
  done
  if [ -n "$LB" ] && [ -x "$LB" ]; then
    "$LB" -m "$F" -p 512 -n 128 -fa 1 -ngl 99 -r 3 -o md 2>&1 | grep -E '^\|' | tee -a "$TABLE"
  fi
done
echo "==== speed"; cat "$TABLE"
