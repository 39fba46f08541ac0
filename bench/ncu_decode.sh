#!/usr/bin/env bash
# Where a decode step's time goes without the overlap (#16, #18): Nsight Compute times each launch of one decode step
# alone (kernels serialized, gpu__time_duration), summed by kernel; beside it the same lane's step as it runs (graphs,
# pdl). The difference is what the launches lose between them: ramps, tails, a launch waiting on the one before. The
# lane's `--profile` stamps a launch from its start under pdl, so a kernel that waits on its predecessor (the one-block
# norms after a GEMV) shows that wait as its own time; this separates the two.
#
# usage: [TYPE=q4_k_m] [KNOBS='{..}'] bench/ncu_decode.sh LANE_TUNE WORKDIR PRESET
set -uo pipefail
LT=$1; W=$2; P=$3
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$LT" "$W" "$P")
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu"; exit 1; }
echo "${KNOBS:-{\}}" > "$W/$P.ncu.json"
"$LT" compile "$F" --knobs "$W/$P.ncu.json" -o "$W/$P.ncu" > /dev/null && "$LT" build "$W/$P.ncu" --arch sm_90 \
  > "$W/$P.ncu.build.log" 2>&1 || { echo "BUILD FAIL $(grep -m3 error "$W/$P.ncu.build.log")"; exit 1; }
D=$W/$P.ncu
printf '2 %s\n' "$(tokens "$(vocab "$D")" 1 5)" > "$W/$P.ncu.prompt"
# The step as it runs: decode ms a token over 128 tokens.
printf '128 %s\n' "$(tokens "$(vocab "$D")" 1 5)" > "$W/$P.ncu.run"
"$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.ncu.run" | grep -E 'DECODE_MS_PER_TOKEN'
# Every launch of a 1-token prompt and 2 generated tokens (the decode form's steps), each alone.
"$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.ncu.prompt" > "$W/$P.ncu.csv" 2> "$W/$P.ncu.err"
python3 - "$W/$P.ncu.csv" <<'PY'
import collections, csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, body = rows[0], rows[1:]
k, v, u = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "ns": 1e-3, "us": 1.0, "ms": 1e3}
by = collections.defaultdict(lambda: [0, 0.0])
for r in body:
    name = r[k].split("<")[0].split("(")[0]
    by[name][0] += 1
    by[name][1] += float(r[v].replace(",", "")) * scale[r[u]]
steps = min(n for n, _ in by.values())  # (the embedding and the arg-max run once a step)
total = sum(t for _, t in by.values()) / steps
print(f"{steps} steps; a step's launches each alone, by kernel:")
print(f"{'kernel':32} {'launches':>8} {'us a step':>10} {'us each':>8}")
for name, (n, t) in sorted(by.items(), key=lambda x: -x[1][1]):
    print(f"{name:32} {n / steps:8.0f} {t / steps:10.1f} {t / n:8.2f}")
print(f"{'(the step, launches alone)':32} {sum(n for n, _ in by.values()) / steps:8.0f} {total:10.1f}")
PY
