#!/usr/bin/env bash
# A tuning job as a user starts it (issue #14): a coordinator and one worker a GPU on this machine, from cold worker
# caches, `lane-tune submit CHECKPOINT --gpus h200 --time-budget BUDGET` with the default strategy and objective;
# nvidia-smi sampled twice a second meanwhile. Prints the job's figures last: configurations measured (a minute),
# the chosen configuration's decode and prefill, the GPU's utilization over the measuring phase, where a
# configuration's cost goes, and what the first configuration cost. Then the chosen configuration (and HAND, a
# hand-picked knob set as JSON text, when given) measured as bench/RESULTS.md's tables are: decode of 128 tokens after a
# 5-token prompt and prefill of a 512-token prompt, 5 timed runs each, in one run.
#
# usage: [HAND='{"numerics":...}'] bench/tune_h200.sh LANE_TUNE WORKDIR PRESET BUDGET [GPUS] [-- SUBMIT_FLAGS...]
set -uo pipefail
LT=$1; W=$2; P=$3; BUDGET=$4; GPUS=${5:-1}; shift 4; [ $# -gt 0 ] && shift; [ "${1:-}" = "--" ] && shift
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
t0=$(date +%s.%N)
F=$(checkpoint "$LT" "$W" "$P")
echo "checkpoint $F ($(du -h "$F" | cut -f1)) ready in $(python3 -c "import sys,time; print(round(time.time() - float(sys.argv[1]), 1))" "$t0") s"
rm -rf "$W/job"; mkdir -p "$W/job"
J=$W/job
"$LT" coordinator --db "$J/lt.db" --listen 127.0.0.1:0 --port-file "$J/port" --allow-path "$W" -v > "$J/coordinator.log" 2>&1 &
COORD=$!
for _ in $(seq 100); do [ -s "$J/port" ] && break; sleep 0.1; done
ADDR=127.0.0.1:$(cat "$J/port")
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 > "$J/smi.csv" &
SMI=$!
WORKERS=()
for g in $(seq 0 $((GPUS - 1))); do
  "$LT" worker --coordinator "$ADDR" --gpu "$g" --cache "$J/cache-$g" -v > "$J/worker-$g.log" 2>&1 &
  WORKERS+=($!)
done
date +%s.%N > "$J/submitted"
"$LT" submit "$F" --path --gpus "${TUNE_GPU:-h200}" --time-budget "$BUDGET" --coordinator "$ADDR" --wait "$@" > "$J/submit.txt" 2> "$J/progress.txt"
date +%s.%N > "$J/ended"
JOB=$(awk '/^job / {print $2; exit}' "$J/submit.txt")
"$LT" results "$JOB" --json --coordinator "$ADDR" > "$J/results.json" 2> "$J/results.err"
"$LT" best "$JOB" --coordinator "$ADDR" > "$J/best.txt" 2>&1
"$LT" status "$JOB" --coordinator "$ADDR" > "$J/status.txt" 2>&1
kill "${WORKERS[@]}" 2> /dev/null; sleep 1; kill $SMI $COORD 2> /dev/null; wait 2> /dev/null
cat "$J/submit.txt"
python3 - "$J" "$GPUS" <<'PY'
import csv, datetime, json, statistics, sys
J, gpus = sys.argv[1], int(sys.argv[2])
submitted, ended = float(open(J + "/submitted").read()), float(open(J + "/ended").read())
try:
    runs = json.load(open(J + "/results.json"))["runs"]
except Exception as e:
    print("no results:", e); runs = []
measured = [r for r in runs if not r.get("reused_from")]
def f(r, k, d=0.0):
    v = r.get(k, d)
    return d if v is None else v
# The measuring phase: from the first result's measurement start to the job's end (the worker's run seconds back
# from the first result's recording time).
rec = sorted(f(r, "recorded_at") for r in measured if f(r, "recorded_at"))
first = min(measured, key=lambda r: f(r, "run"), default=None)
cost = lambda r: (json.loads(r["cost"]) if isinstance(r.get("cost"), str) and r["cost"] else r.get("cost") or {})
start = rec[0] - cost(first).get("run_s", 0) if rec else submitted
util = []
for row in csv.reader(open(J + "/smi.csv")):
    try:
        t = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
    except ValueError:
        continue
    if start <= t <= ended:
        util.append(float(row[2]))
span = ended - submitted
cut = sum(1 for r in measured if r.get("cut_off"))
print(f"\njob: {len(measured)} configurations measured in {span:.0f} s ({60 * len(measured) / max(span, 1):.1f} a minute), "
      f"{sum(1 for r in measured if r.get('valid'))} valid, {sum(1 for r in measured if r.get('verified'))} verified, "
      f"{len(runs) - len(measured)} reused, {cut} screens stopped at their cutoff")
if util:
    print(f"GPU utilization over the measuring phase ({ended - start:.0f} s, {len(util)} samples of {gpus} GPU(s)): "
          f"mean {statistics.mean(util):.1f}%, median {statistics.median(util):.0f}%")
parts = {}
for r in measured:
    c = cost(r)
    for k in ("build_s", "load_s", "run_s", "checks_s", "host_idle_s", "wait_prepare_s"):
        if k in c: parts.setdefault(k, []).append(c[k])
    for k, v in (c.get("phases_s") or {}).items():
        parts.setdefault("run." + k, []).append(v)
if parts:
    print("a configuration's cost (median s; build runs ahead on the CPUs, beside the GPU):",
          ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in sorted(parts.items())))
tot = lambda k: sum(cost(r).get(k, 0) for r in measured)
print(f"where the measuring phase went (s, summed): run {tot('run_s'):.0f}, the runner's checks {tot('checks_s'):.0f}, "
      f"the host idle between requests {tot('host_idle_s'):.0f} (of which waiting on kernels {tot('wait_prepare_s'):.0f})")
# The host's requests on a time line (each result's recording time less its measurement, then its load and run):
# the gaps over 0.5 s between them, the verifications' share of the GPU's run seconds, the first verified result.
span = []
for r in measured:
    c = cost(r)
    if f(r, "recorded_at") and "measure_s" in c:
        t = f(r, "recorded_at") - c["measure_s"]
        span.append((t, t + c.get("load_s", 0) + c.get("run_s", 0)))
if span:
    span.sort()
    t0, cur, gaps = span[0][0], span[0][0], []
    for a, b in span:
        if a > cur + 0.5: gaps.append(a - cur)
        cur = max(cur, b)
    ver = [r for r in measured if r.get("verify")]
    first_ok = min((f(r, "recorded_at") for r in measured if r.get("verified") and r.get("valid")), default=0)
    told = f"the first verified result {first_ok - t0:.0f} s after the first request" if first_ok else "none verified"
    print(f"the host between requests: {len(gaps)} gaps over 0.5 s, {sum(gaps):.1f} s of {cur - t0:.0f}; verifications "
          f"{len(ver)}, {sum(cost(r).get('run_s', 0) for r in ver):.0f} of the {tot('run_s'):.0f} run seconds; {told}")
if first:
    print("the first configuration:", json.dumps(cost(first)))
# The search's turns that proposed (the coordinator at -v): how long a worker without plans waits on one.
turns = []
for line in open(J + "/coordinator.log", errors="replace"):
    if "event=search_proposed" in line:
        kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
        turns.append((float(kv.get("ms", 0)), int(kv.get("plans", 0))))
if turns:
    ms = sorted(t[0] for t in turns)
    print(f"the search's turns that proposed: {len(turns)}, {sum(t[1] for t in turns)} plans, ms median "
          f"{statistics.median(ms):.0f}, max {ms[-1]:.0f}, summed {sum(ms) / 1000:.1f} s")
best = [r for r in runs if r.get("verified") and r.get("valid")]
obj = lambda r: f(r, "objective_ms") or f(r, "workload_ms") or f(r, "median_ms")
if best:
    b = min(best, key=obj)
    pre = b.get("prefill_tok_s") or 0
    print(f"best (verified): decode {f(b, 'median_ms'):.4f} ms/token = {f(b, 'tok_per_s'):.1f} tok/s, "
          f"prefill {f(b, 'prefill_ms'):.2f} ms{f' = {pre:.0f} tok/s' if pre else ''}, workload {f(b, 'workload_ms'):.1f} ms\n  knobs {b.get('knobs')}")
PY

# The chosen configuration (and HAND) as RESULTS.md measures: decode after a 5-token prompt, prefill(512).
python3 - "$J/results.json" > "$J/chosen.json" <<'PY'
import json, sys
runs = [r for r in json.load(open(sys.argv[1]))["runs"] if r.get("verified") and r.get("valid")]
if runs: print(json.dumps(min(runs, key=lambda r: r.get("objective_ms") or 1e300)["knobs"]))
PY
if [ -s "$J/chosen.json" ]; then
  K=(--knobs "$J/chosen.json"); [ -n "${HAND:-}" ] && K+=(--knobs-json "$HAND")
  "$LT" measure "$F" "${K[@]}" --workload 5,129 --repeat 5 --cache "$J/cache-0" --json > "$J/short.json" 2> "$J/short.err"
  "$LT" measure "$F" "${K[@]}" --workload 512,1 --repeat 5 --cache "$J/cache-0" --json > "$J/prefill.json" 2> "$J/prefill.err"
  python3 - "$J/short.json" "$J/prefill.json" <<'PY'
import json, sys
rows = lambda p: [json.loads(l) for l in open(p) if l.strip().startswith("{")]
short, pre = rows(sys.argv[1]), rows(sys.argv[2])
print("\nas RESULTS.md measures (5 timed runs, medians): decode after a 5-token prompt, prefill(512)")
for name, s, p in zip(["chosen", "hand-picked"], short, pre):
    print(f"  {name:12s} decode {s['decode_tok_s']:.1f} tok/s ({s['decode_ms']:.4f} ms), prefill {p['prefill_tok_s']:.0f} tok/s "
          f"({p['prefill_ms']:.2f} ms), {'valid' if s['valid'] and p['valid'] else 'INVALID ' + s['reason'] + p['reason']}  {json.dumps(s['knobs'])}")
PY
fi
