# Session 11, call 3: the compact caches' error on trained weights, as numbers (#19's bounds): qwen3-0.6b trained 25 s,
# as q8_0, each cache type under the dequant and int8 numerics judged by `measure --verify` (JSON: the relative L2
# against the precise lane, the arg-max agreement), prompts from the training text up to 1,200 tokens; the decode at
# depth 2048 with the positions split 16, 32 and 64 ways (lane a position).
set -u
. bench/calls/prelude.sh
. bench/calls/trained_qwen3.sh
I='"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"attn_lanes":true'
D='"numerics":"dequant","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"attn_lanes":true,"attn_splits":16'
K=()
for kv in act f16 bf16 q8_0; do K+=("--knobs-json" "{$D,\"kv_cache\":\"$kv\"}"); done
for s in 16 32 64; do for kv in act f16 q8_0; do K+=("--knobs-json" "{$I,\"attn_splits\":$s,\"kv_cache\":\"$kv\"}"); done; done
timeout 400 $L measure /tmp/w/q8.gguf "${K[@]}" --verify --prompts /tmp/w/prompts --workload 2048,64 --repeat 3 --cache /tmp/w/cache --format json > $OUT/measure.jsonl 2> $OUT/measure.err
echo "measure rc=$?"
python3 - $OUT/measure.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"): continue
    r = json.loads(line)
    k = r.get("knobs", {})
    if isinstance(k, str): k = json.loads(k)
    print(f'{k.get("numerics"):8} kv={k.get("kv_cache"):5} splits={k.get("attn_splits"):3} valid={r.get("valid")} verified={r.get("verified")} '
          f'rel_l2={r.get("rel_l2")} agree={r.get("argmax_agree")} decode_ms={r.get("median_ms")} prefill_ms={r.get("prefill_ms")} {r.get("reason","")}')
PY
