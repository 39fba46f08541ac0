#!/usr/bin/env bash
# Prefill GEMM variants side by side in one run (issue #18, #14's prefill goal): several lane-tune builds (bundles from
# bench/carry.sh, one a variant of the kernels) measure the same configurations of the same checkpoints with
# `lane-tune measure`: prefill(512) (5 timed runs), the prefill chunk's GEMM launches from --profile, and the logits'
# hash on the check prompts, which must be the same bit for bit across variants (they change no sum's order).
#
# usage: bench/gemm_check.sh WORKDIR "PRESET..." "KNOBS_JSON..." BUNDLE_DIR...   (KNOBS_JSON separated by ';')
set -uo pipefail
W=$1; PRESETS=$2; KNOBS=$3; shift 3
mkdir -p "$W"
for B in "$@"; do
  n=$(basename "$B"); mkdir -p "$W/$n"; tar xJf "$B/bundle.tar.xz" -C "$W/$n"
done
first=$(basename "$1")
export LD_LIBRARY_PATH=$W/$first/lib:${LD_LIBRARY_PATH:-}
for P in $PRESETS; do
  [ -f "$W/$P.gguf" ] || "$W/$first/lane-tune" synth --preset "$P" --type q8_0 --seed 1 -q -o "$W/$P.gguf"
done
IFS=';' read -ra KS <<< "$KNOBS"
for P in $PRESETS; do
  for B in "$@"; do
    n=$(basename "$B")
    args=(); for k in "${KS[@]}"; do args+=(--knobs-json "$k"); done
    LD_LIBRARY_PATH=$W/$n/lib "$W/$n/lane-tune" measure "$W/$P.gguf" "${args[@]}" --workload 512,1 --repeat 5 --profile \
      --cache "$W/cache-$n" --json > "$W/$P.$n.json" 2> "$W/$P.$n.err" || tail -5 "$W/$P.$n.err"
  done
done
python3 - "$W" "$PRESETS" "$@" <<'PY'
import json, sys, os, collections
W, presets, bundles = sys.argv[1], sys.argv[2].split(), [os.path.basename(b) for b in sys.argv[3:]]
print(f"{'preset':12s} {'variant':6s} {'cfg':3s} {'prefill ms':>10s} {'tok/s':>7s} {'GEMMs us':>9s} {'hash':16s} valid  top GEMM launches (us each)")
for P in presets:
    for b in bundles:
        try: rows = [json.loads(l) for l in open(f"{W}/{P}.{b}.json") if l.startswith("{")]
        except OSError: rows = []
        for i, r in enumerate(rows):
            agg = collections.defaultdict(list)
            for l in (r.get("profile") or {}).get("launches", []):
                if l["rows"] > 1 and l["kind"].startswith(("gemv", "gemm")):
                    agg[(l["kind"], l["output"].split("_", 1)[-1])].append(l["us"])
            tot = sum(sum(v) for v in agg.values())
            top = sorted(agg.items(), key=lambda kv: -sum(kv[1]))[:4]
            print(f"{P:12s} {b:6s} {i:3d} {r['prefill_ms']:10.2f} {r['prefill_tok_s']:7.0f} {tot:9.0f} {r['logits_hash']:16s} {str(r['valid']):5s}  "
                  + ", ".join(f"{k[0]}:{k[1]} {sum(v)/len(v):.0f}" for k, v in top))
PY
