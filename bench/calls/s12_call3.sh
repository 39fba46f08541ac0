# Session 12, call 3: the decode step's tensor-core attention with three stages (two tiles in flight): the kernels
# alone (bench/attention_bench.cu, as call 1) and qwen3-0.6b trained 25 s, as q8_0, re-verified under attn_mma 2 (the
# lanes built with the three-stage kernel) with call 1's prompts and workload.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/w
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/w/attention_bench bench/attention_bench.cu > $OUT/ab_build.txt 2>&1 || echo "attention_bench build failed"
timeout 150 /tmp/w/attention_bench > $OUT/attention_bench.txt 2>&1; echo "attention_bench rc=$?"
grep -E "^kernel|^mma" $OUT/attention_bench.txt
. bench/calls/trained_qwen3.sh
I='"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true'
D='"numerics":"dequant","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true'
K=()
K+=("--knobs-json" "{$D,\"kv_cache\":\"f16\",\"attn_splits\":16,\"attn_mma\":2}")
K+=("--knobs-json" "{$D,\"kv_cache\":\"bf16\",\"attn_splits\":8,\"attn_mma\":2}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"f16\",\"attn_splits\":16,\"attn_mma\":2}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"f16\",\"attn_splits\":8,\"attn_mma\":2}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"f16\",\"attn_splits\":4,\"attn_mma\":2}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"bf16\",\"attn_splits\":8,\"attn_mma\":2}")
timeout 300 $L measure /tmp/w/q8.gguf "${K[@]}" --verify --prompts /tmp/w/prompts --workload 2048,64 --repeat 3 --cache /tmp/w/cache --format json > $OUT/measure.jsonl 2> $OUT/measure.err
echo "measure rc=$?"; tail -2 $OUT/measure.err
python3 - $OUT/measure.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"): continue
    r = json.loads(line); k = r["knobs"]
    print(f'{k.get("numerics"):8} kv={k.get("kv_cache"):5} mma={k.get("attn_mma")} splits={k.get("attn_splits"):3} valid={r.get("valid")} verified={r.get("verified")} '
          f'rel_l2={r.get("rel_l2")} decode_ms={r.get("decode_ms")} prefill_ms={r.get("prefill_ms")} workload_ms={r.get("workload_ms")} {r.get("reason","")}')
PY
