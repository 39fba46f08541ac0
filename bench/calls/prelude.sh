# Sourced by the device calls' scripts: the carried lane-tune bundle unpacked, its libraries and nvcc in the paths.
mkdir -p /tmp/c && tar xJf ${CARRY:-.carry}/bundle.tar.xz -C /tmp/c  # (CARRY: another carried build)
export LD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu LT_NVCC=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH
L=/tmp/c/lane-tune
G=h200; nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | grep -q H100 && G=h100  # the kind to submit for

# A tuning job (bench/tune_h200.sh, $TYPE's file) with its summary printed and its results kept under $OUT:
# usage: tune_job NAME PRESET BUDGET TIMEOUT_S  (writes $OUT/tune-NAME.txt and $OUT/results-NAME.json.xz)
tune_job() {
  TUNE_GPU=$G timeout "$4" bash bench/tune_h200.sh $L "/tmp/tj-$1" "$2" "$3" > "$OUT/tune-$1.txt" 2>&1
  echo "== $1 tune rc=$?"
  grep -E "^job:|GPU util|cost \(median|where the|host between|search's turns|best \(verified\)|h[12]00: model" "$OUT/tune-$1.txt" |
    cut -c1-300
  cp "/tmp/tj-$1/job/results.json" "$OUT/results-$1.json" 2> /dev/null && xz -9 "$OUT/results-$1.json"
}

# Prompts of a trained checkpoint's own text (train_checkpoint.py's OUT.gguf.text), a line each as `measure --prompts`
# reads them: usage: text_prompts TEXT SEED GENERATED LENGTH...  (prints the lines)
text_prompts() {
  python3 - "$@" <<'PY'
import sys, random
b = open(sys.argv[1], "rb").read()
r = random.Random(int(sys.argv[2]))
for n in map(int, sys.argv[4:]):
    at = r.randrange(0, len(b) - n)
    print(sys.argv[3], " ".join(str(x) for x in b[at:at + n]))
PY
}

# Where a prefill chunk of 512 rows goes under a build: `measure --profile` (3 repeats) of one knob set, the launches
# of 512 rows summed by kind, a line appended to $OUT/profiles.txt.
# usage: chunk_profile WHO LANE_TUNE FILE KNOBS_JSON  (WHO names the line and the build's kernel cache)
chunk_profile() {
  timeout 100 $2 measure $3 --knobs-json "$4" --workload 512,16 --repeat 3 --profile --json --cache /tmp/ab/c-$1 \
    > /tmp/ab/prof.json 2> /tmp/ab/prof.err
  python3 - "$1 $(basename $3)" /tmp/ab/prof.json <<'PY' | tee -a $OUT/profiles.txt
import json, sys, collections
for line in open(sys.argv[2]):
    if not line.strip().startswith('{'): continue
    j = json.loads(line); p = j.get('profile') or {}
    by = collections.defaultdict(lambda: [0, 0.0])
    for l in p.get('launches', []):
        if l.get('rows') == 512: by[l['kind']][0] += 1; by[l['kind']][1] += l['us']
    tot = sum(v[1] for v in by.values())
    print(f"{sys.argv[1]}: prefill(512) {j.get('prefill_ms', 0):.2f} ms {j.get('failure','')} {j.get('reason','')[:200]}; chunk {tot:.0f} us: " +
          ", ".join(f"{k} {v[1]/max(v[0],1):.1f} x {v[0]}" for k, v in sorted(by.items(), key=lambda e: -e[1][1])[:7]))
PY
  [ -s /tmp/ab/prof.json ] || tail -3 /tmp/ab/prof.err
}

# Knob sets timed on workloads by `measure --workload W --repeat N`, a line a set and workload (its attention splits
# and gemv_rows_q6_k named); the raw JSON kept as $OUT/NAME-W.json (W's comma a dash).
# usage: workload_lines NAME CHECKPOINT REPEAT "W1 W2 .." --knobs-json '{..}' ...
workload_lines() {
  local name=$1 f=$2 rep=$3 wls=$4 wl j
  shift 4
  for wl in $wls; do
    j="$OUT/$name-${wl/,/-}"
    $L measure "$f" "$@" --workload "$wl" --repeat "$rep" --cache /tmp/wl-cache --json > "$j.json" 2> "$j.err"
    python3 - "$j.json" "$name" "$wl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if not l.strip().startswith("{"): continue
    j = json.loads(l); k = j["knobs"]
    print(f"{sys.argv[2]} workload {sys.argv[3]:8s} splits {k.get('attn_splits')} q6k {k.get('gemv_rows_q6_k')}: "
          f"workload {j.get('workload_ms', 0):.2f} ms, decode {j.get('decode_tok_s', 0):.1f} tok/s, "
          f"prefill {j.get('prefill_tok_s', 0):.0f} tok/s {'' if j.get('valid') else j.get('reason')}")
PY
  done
}

# Long context on llama-3.1-8b Q4_K_M (bench/depth.sh: lanes of 33,024 positions, decode at depth 32,768, prefill of
# 512) under KNOB_SETS (a JSON set a line); the table kept as $OUT/depth.txt.
# usage: depth_run SETS [TIMEOUT_S]
depth_run() {
  TYPE=q4_k_m SHORT=512 KNOB_SETS="$1" timeout "${2:-480}" bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth.txt 2>&1
  echo "depth rc=$?"
  cut -c1-160 /tmp/d/depth.txt
}
