# Session 12, call 1: attention on the tensor cores (attn_mma, #18/#19). (1) bench/attention_bench.cu: the attention
# kernels alone at llama-3.1-8b's shapes over an f16 cache, decode at depths 512-32768 and a 256-row chunk at depths 0,
# 8192 and 32512, each against lk_attention's output. (2) qwen3-0.6b trained 25 s, as q8_0: attn_mma 1 (chunks) and 2
# (decode too) under dequant and int8 over the f16 and bf16 caches, judged by `measure --verify` on prompts of the
# training text up to 2,000 tokens, the workload a 2,048-token prompt then 64 generated.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/w
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/w/attention_bench bench/attention_bench.cu > $OUT/ab_build.txt 2>&1 || echo "attention_bench build failed"
timeout 150 /tmp/w/attention_bench > $OUT/attention_bench.txt 2>&1; echo "attention_bench rc=$?"
cat $OUT/attention_bench.txt
. bench/calls/trained_qwen3.sh
I='"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true'
D='"numerics":"dequant","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true'
K=()
K+=("--knobs-json" "{$D,\"kv_cache\":\"f16\",\"attn_lanes\":true,\"attn_splits\":16}")
K+=("--knobs-json" "{$D,\"kv_cache\":\"f16\",\"attn_lanes\":true,\"attn_splits\":16,\"attn_mma\":1}")
K+=("--knobs-json" "{$D,\"kv_cache\":\"f16\",\"attn_splits\":16,\"attn_mma\":2}")
K+=("--knobs-json" "{$D,\"kv_cache\":\"bf16\",\"attn_splits\":16,\"attn_mma\":2}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"f16\",\"attn_lanes\":true,\"attn_splits\":16}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"f16\",\"attn_lanes\":true,\"attn_splits\":16,\"attn_mma\":1}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"f16\",\"attn_splits\":16,\"attn_mma\":2}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"f16\",\"attn_splits\":8,\"attn_mma\":2}")
K+=("--knobs-json" "{$I,\"kv_cache\":\"bf16\",\"attn_splits\":4,\"attn_mma\":2}")
timeout 330 $L measure /tmp/w/q8.gguf "${K[@]}" --verify --prompts /tmp/w/prompts --workload 2048,64 --repeat 3 --cache /tmp/w/cache --format json > $OUT/measure.jsonl 2> $OUT/measure.err
echo "measure rc=$?"; tail -3 $OUT/measure.err
python3 - $OUT/measure.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"): continue
    r = json.loads(line)
    k = r.get("knobs", {})
    if isinstance(k, str): k = json.loads(k)
    print(f'{k.get("numerics"):8} kv={k.get("kv_cache"):5} mma={k.get("attn_mma")} lanes={k.get("attn_lanes")} splits={k.get("attn_splits"):3} valid={r.get("valid")} verified={r.get("verified")} '
          f'rel_l2={r.get("rel_l2")} agree={r.get("argmax_agree")} decode_ms={r.get("median_ms")} prefill_ms={r.get("prefill_ms")} {r.get("reason","")}')
PY
