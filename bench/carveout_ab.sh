#!/usr/bin/env bash
# Does the SM's shared-memory/L1 split cost the decode step? The same lane twice: as compiled (the driver picks each
# kernel's carveout: the GEMVs little shared memory, the tensor-core attention 108 KB, so an SM may reconfigure between
# them and a launch cannot start beside its predecessor's blocks), and with every kernel preferring CARVEOUT percent of
# the unified memory as shared (cudaFuncAttributePreferredSharedMemoryCarveout, default 100). Decode of 128 tokens after
# a DECODE_AT-token prompt (default 5), ROUNDS alternating processes (default 3), medians; the two lanes' logits on a
# prompt compared bit for bit (the carveout changes no arithmetic).
# usage: [TYPE=q4_k_m] [KNOBS='{..}'] [CARVEOUT=100] [ROUNDS=3] [DECODE_AT=5] bench/carveout_ab.sh LANE_TUNE WORKDIR PRESET
set -uo pipefail
LT=$1; W=$2; P=$3
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$LT" "$W" "$P")
echo "${KNOBS:-{\}}" > "$W/$P.co.json"
A=$W/$P.co-a; B=$W/$P.co-b
"$LT" compile "$F" --knobs "$W/$P.co.json" -o "$A" > /dev/null || exit 1
rm -rf "$B" && cp -r "$A" "$B"
# Every kernel instance the lane launches, its carveout set where the host sets the large ones' shared memory.
python3 - "$B/lane.cu" "${CARVEOUT:-100}" <<'PY'
import re, sys
path, pct = sys.argv[1], sys.argv[2]
src = open(path).read()
names = sorted({m.group(1).strip() for m in re.finditer(r"lk_launch\(([^;]*?), dim3\(", src)} - {"kernel"})
lines = "".join(f"  CK(cudaFuncSetAttribute({n}, cudaFuncAttributePreferredSharedMemoryCarveout, {pct}));\n" for n in names)
anchor = "  lk_stagger = a.stagger;"
assert anchor in src, "no anchor"
open(path, "w").write(src.replace(anchor, lines + anchor, 1))
print(f"carveout {pct} on {len(names)} kernels")
PY
printf '%s\n%s\n' "$A" "$B" > "$W/$P.co.dirs"
build_all "$LT" "$W/$P.co.dirs"
V=$(vocab "$A")
T=$(tokens "$V" "${DECODE_AT:-5}" 7)
declare -A dec
for r in $(seq "${ROUNDS:-3}"); do
  for s in a b; do
    D=$W/$P.co-$s
    dec[$s]+=" $("$D/lane" "$F" "$D/lane.sidecar" 128 $T 2> /dev/null | awk '/DECODE_TOK_PER_S/ {print $2}')"
  done
done
printf '16 %s\n' "$(tokens "$V" 40 8)" > "$W/$P.co.prompt"
for s in a b; do "$W/$P.co-$s/lane" "$F" "$W/$P.co-$s/lane.sidecar" --prompts "$W/$P.co.prompt" --logits "$W/$P.co-$s.bin" > /dev/null 2>&1; done
same=$(cmp -s "$W/$P.co-a.bin" "$W/$P.co-b.bin" && echo bitwise-equal || echo DIFFERENT)
med() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:] if x]; print(f"{statistics.median(v):.1f}" if v else "?")' "$@"; }
a=$(med ${dec[a]}); b=$(med ${dec[b]})
echo "==== carveout $P ${TYPE:-q8_0} at ${DECODE_AT:-5}: default $a, carveout ${CARVEOUT:-100} $b tok/s ($(python3 -c "print(f'{$b/$a:.3f}')" 2> /dev/null)x) logits $same [a:${dec[a]} b:${dec[b]}]"
