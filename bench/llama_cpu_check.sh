#!/usr/bin/env bash
# lane-tune against llama.cpp on this machine's CPUs (no GPU): checkpoints quantized by llama.cpp's own quantize code
# (files written by another tool), each judged three ways:
#   1. types: the tensor types llama.cpp's quantizer chose against `lane-tune quantize`'s for the same type (the mix
#      synth and quantize copy, mix.hpp); "qerr": the two quantizers' relative L2 error against the f32 source
#      (llama.cpp's / lane-tune's, over every matrix quantized), and the log says how many tensors are byte-equal;
#   2. dequant: the file dequantized to f32 by ggml (llcheck quantize .. 0) against `lane-tune quantize --type f32` of
#      it (the block formats' decoding, value by value);
#   3. logits: `lane-tune reference` (f64) on a prompt, then llama.cpp's CPU backend on the same tokens (forced), each
#      generated position's logits compared (rel L2, arg-max agreement): "exact" runs llama.cpp on the file ggml
#      dequantized to f32 (the same weights, f32 sums: ~1e-6 apart where the two agree); "as is" on the quantized file,
#      where llama.cpp's CPU dot products quantize the activations to 8 bits (~2e-2 of noise, more where a mixture's
#      router flips a near tie);
# and `lane-tune compile` must take the file.
#
# usage: bench/llama_cpu_check.sh [PRESET[:LAYERS] | SHAPE.json ...]     (LLCHECK=path to llcheck, else built by bench/llama_cpu/build.sh;
#        LT=lane-tune binary; W=work dir; TYPES="q4_k_m ..." to narrow; PROMPT_LEN=N: a prompt of N tokens in place
#        of the 7 (past a sliding window, say); VALUES=0: skip the value-by-value comparisons (pure Python: hours on a
#        real model's embedding), keeping types, bytes, compile and logits)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
LT=${LT:-$root/build/cli/lane-tune}
W=${W:-/tmp/llama_cpu_check}
mkdir -p "$W"
LLCHECK=${LLCHECK:-$W/llcheck}
[ -x "$LLCHECK" ] || bash "$root/bench/llama_cpu/build.sh" "$root/.llama/src.tar.xz" "$W" > /dev/null || exit 1
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(tiny-llama tiny-qwen2 tiny-qwen3 tiny-gemma2 tiny-gemma3 tiny-moe tiny-qwen2moe tiny-gpt-oss)
# lane-tune's type name and llama.cpp's file type number (llama.h's LLAMA_FTYPE_MOSTLY_*)
declare -A FTYPE=([f32]=0 [f16]=1 [bf16]=32 [q8_0]=7 [q4_0]=2 [q4_1]=3 [q5_0]=8 [q5_1]=9 [q2_k]=10 [q3_k]=11 [q4_k_m]=15
                  [q5_k_m]=17 [q6_k]=18 [iq4_nl]=25 [iq4_xs]=30 [mxfp4]=38)
TYPES=${TYPES:-"f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k_m q5_k_m q6_k iq4_nl iq4_xs mxfp4"}
prompt=(1 17 42 300 5 99 250)
fails=0
printf '%-14s %-7s %-5s %-19s %-9s %-7s %-44s %s\n' preset type types qerr dequant compile "logits exact" \
  "logits as is"
for spec in "${presets[@]}"; do
  p=${spec%%:*}; what=(--preset "$p"); [ "$p" = "$spec" ] || { what+=(--layers "${spec#*:}"); p=$p-${spec#*:}l; }
  [ -f "$spec" ] && { p=$(basename "$spec" .json); what=(--shape "$spec"); }
  base=$W/$p-f32.gguf
  "$LT" synth "${what[@]}" --type f32 -q -o "$base" || { echo "$p: synth failed"; fails=$((fails + 1)); continue; }
  vocab=$("$LT" inspect --json "$base" | python3 -c 'import json,sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
  [ -z "${PROMPT_LEN:-}" ] || prompt=($(python3 -c "print(*[(i * 7919 + 13) % $vocab for i in range($PROMPT_LEN)])"))
  for t in $TYPES; do
    q=$W/$p-$t.ll.gguf
    log=$W/$p-$t.log
    if ! "$LLCHECK" quantize "$base" "$q" "${FTYPE[$t]}" > "$log" 2>&1; then
      printf '%-14s %-7s llama.cpp refused to quantize (%s)\n' "$p" "$t" "$(tail -1 "$log")"
      continue
    fi
    "$LT" inspect --json "$q" > "$W/q.json"
    # 1. the types against lane-tune's own quantize of the same f32 file
    "$LT" quantize "$base" --type "$t" -q -o "$W/lt.gguf" >> "$log" 2>&1 && "$LT" inspect --json "$W/lt.gguf" > "$W/lt.json"
    python3 "$root/bench/llama_cpu/tensors.py" types "$W/q.json" "$W/lt.json" >> "$log" 2>&1 && ty=same || ty=DIFF
    # 2. the dequantized values, ggml's against lane-tune's
    "$LLCHECK" quantize "$q" "$W/ll32.gguf" 0 >> "$log" 2>&1
    if [ "${VALUES:-1}" = 0 ]; then dq=-; qe=-; else
    "$LT" quantize "$q" --type f32 -q -o "$W/lt32.gguf" >> "$log" 2>&1
    "$LT" inspect --json "$W/ll32.gguf" > "$W/a.json"; "$LT" inspect --json "$W/lt32.gguf" > "$W/b.json"
    dq=$(python3 "$root/bench/llama_cpu/tensors.py" values "$W/a.json" "$W/b.json" 2>&1 | tee -a "$log" |
         sed -n 's/.*worst difference \([^ ]*\).*/\1/p')
    "$LT" quantize "$W/lt.gguf" --type f32 -q -o "$W/ltq32.gguf" >> "$log" 2>&1
    "$LT" inspect --json "$W/ltq32.gguf" > "$W/c.json"; "$LT" inspect --json "$base" > "$W/src.json"
    qe=$(python3 "$root/bench/llama_cpu/tensors.py" error "$W/src.json" "$W/a.json" "$W/c.json" 2>&1 | tee -a "$log" |
         sed -n 's/error: llama.cpp \([^ ]*\) lane-tune \([^ ]*\).*/\1\/\2/p')
    fi
    # 3. compile, and the logits on the prompt
    "$LT" compile "$q" -o "$W/lane" --gpu h200 >> "$log" 2>&1 && co=ok || { co=FAIL; fails=$((fails + 1)); }
    toks=$("$LT" reference "$q" --n-gen 8 --logits "$W/ref.f32" "${prompt[@]}" 2>> "$log" | sed -n 's/^TOKENS: //p')
    read -r -a gen <<< "$toks"
    logits() {  # llama.cpp on file $1 against the reference's rows
      if [ ${#gen[@]} -ne 8 ]; then
        echo "reference failed: $(tail -1 "$log")"
      elif "$LLCHECK" eval "$1" "$W/ll.f32" ${#prompt[@]} "${prompt[@]}" "${gen[@]:0:7}" >> "$log" 2>&1; then
        python3 "$root/bench/llama_cpu/compare.py" "$W/ref.f32" "$W/ll.f32" "$vocab" | sed 's/rel_l2_//g'
      else
        echo "llama.cpp eval failed: $(tail -1 "$log")"
      fi
    }
    exact=$(logits "$W/ll32.gguf")
    asis=$(logits "$q")
    [ ${#gen[@]} -eq 8 ] || fails=$((fails + 1))
    printf '%-14s %-7s %-5s %-19s %-9s %-7s %-44s %s\n' "$p" "$t" "$ty" "${qe:--}" "${dq:-?}" "$co" "$exact" "$asis"
  done
done
exit $((fails > 0))
