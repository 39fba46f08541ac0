#!/usr/bin/env bash
# Session 14, call 4 (~3 minutes; carry .carry): why call 3's qwen3-0.6b Q4_K_M (random weights) sets over an f16
# cache with attn_mma 2 failed bench/speed.sh's check: `measure --verify` (the worker's judge, which prints its reason)
# on the same prompts (5 and 300 tokens), the f16 cache under the int8 tiled GEMMs and under gemm_half, and the f32
# cache under gemm_half.
set -u
. bench/calls/prelude.sh
. bench/common.sh
W=/tmp/w; mkdir -p $W
F=$(TYPE=q4_k_m checkpoint "$L" "$W" qwen3-0.6b)
V=$("$L" inspect "$F" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
PROMPT_LENS="5 300" prompts "$V" "$W/p" 8
B='"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true'
timeout 200 $L measure "$F" --knobs-json "{$B,\"gemm_prequant\":true,\"gemm_tile\":128,\"kv_cache\":\"f16\",\"attn_mma\":2}" \
  --knobs-json "{$B,\"gemm_half\":true,\"kv_cache\":\"f16\",\"attn_mma\":2}" --knobs-json "{$B,\"gemm_half\":true}" \
  --verify --prompts $W/p --workload 300,8 --repeat 1 --cache $W/cache --format json > $OUT/m.jsonl 2> $OUT/m.err
echo "measure rc=$?"
python3 -c '
import json,sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r=json.loads(l); k=r["knobs"]
        print(k.get("gemm_half"), k.get("kv_cache"), k.get("attn_mma"), r.get("verified"), r.get("rel_l2"), r.get("failure"), r.get("reason","")[:300])
' $OUT/m.jsonl
tail -3 $OUT/m.err
