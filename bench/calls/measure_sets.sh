# Sourced by the device calls' scripts after prelude.sh: `measure_sets LIMIT FILE NAME KNOBS_JSON...` runs
# `measure --verify` of the knob sets on FILE over /tmp/w/prompts (a 2,048-token prompt then 64 as the workload) into
# $OUT/measure-NAME.jsonl; `measure_table` prints a line a configuration of every such file: its chunk GEMMs (half,
# tile or the others), numerics, verdict, error, prefill and decode times, and why it failed.
measure_sets() {
  local limit=$1 f=$2 n=$3; shift 3
  local K=(); for k in "$@"; do K+=(--knobs-json "$k"); done
  timeout "$limit" $L measure "$f" "${K[@]}" --verify --prompts /tmp/w/prompts --workload 2048,64 --repeat 3 \
    --cache /tmp/w/cache --format json > "$OUT/measure-$n.jsonl" 2> "$OUT/measure-$n.err"
  echo "measure $n rc=$?"
}
measure_table() {
  python3 - "$OUT"/measure-*.jsonl <<'PY'
import json, sys
for p in sys.argv[1:]:
    for line in open(p):
        line = line.strip()
        if not line.startswith("{"): continue
        r = json.loads(line)
        k = r.get("knobs", {})
        tag = ("half " if k.get("gemm_half") else "tile " if k.get("gemm_tile") else "slabs ") + k.get("numerics", "")
        print(f'{p.split("measure-")[1][:-6]:5} {tag:14} valid={r.get("valid")} verified={r.get("verified")} '
              f'rel_l2={r.get("rel_l2", 0):.3g} prefill_ms={r.get("prefill_ms", 0):.2f} '
              f'decode_ms={r.get("decode_ms", 0):.3f} {(r.get("reason", "") + r.get("error", ""))[:160]}')
PY
}
