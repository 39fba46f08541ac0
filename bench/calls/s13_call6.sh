#!/usr/bin/env bash
# Session 13, call 6: call 5 again for the gemm_half lanes alone (call 5's failed: lk_half_rows took a size_t the
# image passes as an int; its baselines stand): the trained qwen3-0.6b (kept from call 5 where the machine is warm)
# under dequant and int8 with gemm_half, `measure --verify`, a 2,048-token prompt then 64; 
# (the device time left allowed the trained checkpoint's q8_0 and f16 lanes alone).
set -u
. bench/calls/prelude.sh
[ -f /tmp/w/q8.gguf ] || . bench/calls/trained_qwen3.sh
I='"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
D='"numerics":"dequant","max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
run() {  # FILE NAME KNOBS...
  local f=$1 n=$2; shift 2
  local K=(); for k in "$@"; do K+=(--knobs-json "$k"); done
  timeout 100 $L measure $f "${K[@]}" --verify --prompts /tmp/w/prompts --workload 2048,64 --repeat 3 --cache /tmp/w/cache --format json > $OUT/measure-$n.jsonl 2> $OUT/measure-$n.err
  echo "measure $n rc=$?"
}
run /tmp/w/q8.gguf q8 "{$I,\"gemm_half\":true}"
run /tmp/w/q.gguf f16 "{$D,\"gemm_half\":true}"
python3 - $OUT/measure-*.jsonl <<'PY'
import json, sys
for p in sys.argv[1:]:
    for line in open(p):
        line = line.strip()
        if not line.startswith("{"): continue
        r = json.loads(line)
        k = r.get("knobs", {})
        tag = ("half " if k.get("gemm_half") else "tile " if k.get("gemm_tile") else "slabs ") + k.get("numerics", "")
        print(f'{p.split("measure-")[1][:-6]:5} {tag:14} valid={r.get("valid")} verified={r.get("verified")} rel_l2={r.get("rel_l2", 0):.3g} prefill_ms={r.get("prefill_ms", 0):.2f} decode_ms={r.get("decode_ms", 0):.3f} {(r.get("reason", "") + r.get("error", ""))[:160]}')
PY
