#!/usr/bin/env bash
# Load to first token, side by side (issue #18): from a warm page cache, the wall time from starting the process to
# its first generated token. Ours: the compiled lane (`lane FILE lane.sidecar --prompts`, a one-token prompt, one token
# generated), with the time its weights are resident (its LANE_CONTRACT line) beside, and again with
# CUDA_MODULE_LOADING=LAZY (kernels loaded at first use; the lane loads all at start unless told); llama.cpp: `llama-bench -p 0 -n 1
# -r 1 --no-warmup` (load, one token) on the same file. Each RUNS times (default 3) in turn, medians printed last.
#
# usage: [TYPE=q4_k_m] [RUNS=3] [KNOBS='{..}'] bench/load.sh LANE_TUNE WORKDIR LLAMA_BENCH -- PRESET
set -uo pipefail
LT=$1; W=$2; LB=$3; shift 3; [ "${1:-}" = "--" ] && shift
P=$1
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$LT" "$W" "$P")
echo "${KNOBS:-{\}}" > "$W/$P.load.json"
"$LT" compile "$F" --knobs "$W/$P.load.json" -o "$W/$P.load" > /dev/null && "$LT" build "$W/$P.load" --arch sm_90 \
  > "$W/$P.load.build.log" 2>&1 || { echo "LOAD BUILD FAIL $(grep -m3 error "$W/$P.load.build.log")"; exit 1; }
printf '1 %s\n' "$(tokens "$(vocab "$W/$P.load")" 1 5)" > "$W/$P.load.prompt"
cat "$F" > /dev/null  # the page cache warm
python3 - "$W/$P.load" "$F" "$W/$P.load.prompt" "$LB" "${RUNS:-3}" <<'PY'
import os, statistics, subprocess, sys, time
lane, f, prompt, lb, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

def timed(argv, mark):
    """Wall seconds to the process's end, and to its first stdout line starting with `mark` (None without one)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    at = None
    for line in p.stdout:
        if mark and at is None and line.startswith(mark):
            at = time.perf_counter() - t0
    rc = p.wait()
    return time.perf_counter() - t0, at, rc

ours, resident, lazy, theirs = [], [], [], []
argv = [lane + "/lane", f, lane + "/lane.sidecar", "--prompts", prompt]
for _ in range(runs):
    total, loaded, rc = timed(argv, "LANE_CONTRACT")
    if rc != 0: sys.exit(f"the lane exited {rc}")
    ours.append(total); resident.append(loaded)
    # The same lane with its kernels loaded at first use (CUDA's default) instead of all at start (the lane's).
    os.environ["CUDA_MODULE_LOADING"] = "LAZY"
    total, _, rc = timed(argv, None)
    del os.environ["CUDA_MODULE_LOADING"]
    lazy.append(total if rc == 0 else float("nan"))
    total, _, rc = timed([lb, "-m", f, "-p", "0", "-n", "1", "-r", "1", "--no-warmup", "-ngl", "99", "-fa", "1"], None)
    if rc != 0:  # (an older llama-bench without --no-warmup)
        total, _, rc = timed([lb, "-m", f, "-p", "0", "-n", "1", "-r", "1", "-ngl", "99", "-fa", "1"], None)
    theirs.append(total)
    print(f"run: lane {ours[-1]:.3f} s (weights resident at {loaded:.3f} s; lazy kernels {lazy[-1]:.3f} s), "
          f"llama-bench {theirs[-1]:.3f} s rc={rc}", flush=True)
m = statistics.median
print(f"==== load to first token (median of {runs}): lane {m(ours):.3f} s (resident {m(resident):.3f} s; lazy kernels "
      f"{m(lazy):.3f} s), llama-bench {m(theirs):.3f} s, ratio {m(theirs) / m(ours):.2f}x")
PY
