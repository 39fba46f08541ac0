#!/usr/bin/env bash
# A kernel change A/B in one run: the same checkpoint and knobs compiled by two lane-tune builds (the kernel library is
# embedded in the binary), both lanes built, then decode (128 tokens after a 5-token prompt) and prefill (PREFILL
# tokens, default 512; a list such as "300 5" times each) alternately, ROUNDS processes each (default 3), medians; then
# the two lanes' logits on the check prompts compared (tokens, relative L2: a kernel change that is meant to keep the
# numbers shows ~0).
# KNOBS_A gives A other knobs (default KNOBS): a knob's A/B with one build as both. KNOBS_C (with LT_C, default
# LT_B) adds a third lane C, timed in the same rounds and compared with A the same way; AB_SIDES="a b c d .." more
# lanes of B's build (KNOBS_D .. default KNOBS, NVFLAGS_D ..). NVFLAGS_A, NVFLAGS_B, ..: more nvcc flags for that
# lane's build (a kernel's measurement switch such as -DLK_PDL_FIRST=1: kernels/prelude.cuh), through a wrapper named
# by LT_NVCC. AB_PROMPT_LENS: the compared prompts' lengths (default "5 300"; 600 reaches a chunk of 512 rows).
# AB_DECODE_AT: the decode's prompt length (default 5; 512 decodes at positions 512-640, as bench/speed.sh's timing
# does).
#
# usage: [TYPE=q4_k_m] [KNOBS='{..}'] [KNOBS_A='{..}'] [KNOBS_C='{..}' [LT_C=..]] [AB_SIDES=..] [NVFLAGS_A='-D..' ..]
#        [ROUNDS=3] [PREFILL=512] [AB_DECODE_AT=5] bench/ab_decode.sh LT_A LT_B WORKDIR PRESET
set -uo pipefail
A=$1; B=$2; W=$3; P=$4
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$B" "$W" "$P")
S="a b"
[ -n "${KNOBS_C:-}" ] && S="a b c"
S=${AB_SIDES:-$S}
for s in $S; do
  kn=KNOBS_${s^^}
  [ $s = b ] && kn=KNOBS
  [ $s = a ] && [ -z "${KNOBS_A:-}" ] && kn=KNOBS
  echo "${!kn:-${KNOBS:-{\}}}" > "$W/$P.ab-$s.json"
done
: > "$W/$P.ab.dirs"
for s in $S; do
  LT=$B; [ $s = a ] && LT=$A; [ $s = c ] && LT=${LT_C:-$B}
  "$LT" compile "$F" --knobs "$W/$P.ab-$s.json" -o "$W/$P.ab-$s" > /dev/null && echo "$W/$P.ab-$s" >> "$W/$P.ab.dirs"
done
for s in $S; do
  fl=NVFLAGS_${s^^}; NV=$LT_NVCC
  if [ -n "${!fl:-}" ]; then
    NV="$W/$P.ab-$s.nvcc"
    printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$LT_NVCC" "${!fl}" > "$NV" && chmod +x "$NV"
  fi
  LT_NVCC=$NV "$B" build "$W/$P.ab-$s" --arch sm_90 > "$W/$P.ab-$s.build.log" 2>&1 || echo "BUILD_FAIL $W/$P.ab-$s" &
done
wait
V=$(vocab "$W/$P.ab-b")
T=$(tokens "$V" "${AB_DECODE_AT:-5}" 7)
PREFILLS=${PREFILL:-512}
for n in $PREFILLS; do printf '1 %s\n1 %s\n' "$(tokens "$V" "$n" 4)" "$(tokens "$V" "$n" 4)" > "$W/$P.ab.pre$n"; done
declare -A dec pre
for r in $(seq "${ROUNDS:-3}"); do
  for s in $S; do
    D="$W/$P.ab-$s"
    dec[$s]+=" $("$D/lane" "$F" "$D/lane.sidecar" 128 $T 2> /dev/null | awk '/DECODE_TOK_PER_S/ {print $2}')"
    for n in $PREFILLS; do  # (the second prompt's prefill: the first warms up)
      pre[$s$n]+=" $("$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.ab.pre$n" 2> /dev/null |
        awk '/PREFILL_MS/ {k++; if (k == 2) printf "%.0f", '"$n"' * 1000 / $2}')"
    done
  done
done
med() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x]; print(f"{statistics.median(v):.1f}" if v else "?")' "$@"; }
PROMPT_LENS="${AB_PROMPT_LENS:-5 300}" prompts "$V" "$W/$P.ab.prompts" 8
for s in $S; do
  D="$W/$P.ab-$s"
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.ab.prompts" --logits "$D/ab.bin" > "$D/ab.txt" 2>&1
done
da=$(med ${dec[a]})
for s in ${S#a }; do
  S_=${s^^}
  cmp=$(python3 "$BENCH/compare_logits.py" "$W/$P.ab-a/ab.bin" "$W/$P.ab-$s/ab.bin" "$V" --tol 1e-3 \
    --ref-tokens "$W/$P.ab-a/ab.txt" --out-tokens "$W/$P.ab-$s/ab.txt" | grep -o 'rel_l2=[^ ]*\|tokens=[^ ]*' | tr '\n' ' ')
  db=$(med ${dec[$s]})
  echo "==== A/$S_ $P ${TYPE:-q8_0}: decode A $da $S_ $db tok/s ($S_/A $(python3 -c "print(f'{$db/$da:.3f}')" 2> /dev/null)) [A:${dec[a]} $S_:${dec[$s]}]"
  for n in $PREFILLS; do
    pa=$(med ${pre[a$n]}); pb=$(med ${pre[$s$n]})
    echo "==== prefill($n) A $pa $S_ $pb tok/s ($S_/A $(python3 -c "print(f'{$pb/$pa:.3f}')" 2> /dev/null)) [A:${pre[a$n]} $S_:${pre[$s$n]}]"
  done
  echo "==== $S_'s logits against A's: $cmp"
done
