#!/usr/bin/env bash
# Session 16, call 3 (~8 minutes; carry .carry, .llama/llama-bench.xz, .llama/lib): #17 after call 2's profile.
# (1) Correctness of the new launches on random-weight tiny mixtures (tiny-qwen2moe q8_0, tiny-gpt-oss MXFP4),
# `measure --verify`, prompts of 40 and 600 tokens (600: a chunk of 512 and the rest): int8 without and with
# gemv_prequant (the experts' int8 copies: the same logits hash expected), int8x2 with it and gemm_half in chunks of
# 512, dequant + gemm_half in chunks of 512 (the router's f32 slabs along y, the parallel grouping), precise.
# (2) qwen3-30b-a3b q8_0 (with llama-bench) and gpt-oss-20b MXFP4 (llama-bench in call 1) under int8 + gemv_prequant
# + gemm_half + attn_mma 2, chunks of 512 and 256.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
. bench/common.sh
mkdir -p /tmp/v
V_SETS=('{"numerics":"int8","max_chunk":64}'
        '{"numerics":"int8","max_chunk":64,"gemv_prequant":true}'
        '{"numerics":"int8x2","max_chunk":512,"gemv_prequant":true,"gemm_half":true,"kv_cache":"f16","attn_mma":2}'
        '{"numerics":"dequant","max_chunk":512,"gemm_half":true,"fuse_qkv":true}'
        '{"numerics":"precise","max_chunk":64}')
K=(); for s in "${V_SETS[@]}"; do K+=(--knobs-json "$s"); done
for PT in "tiny-qwen2moe q8_0" "tiny-gpt-oss mxfp4"; do
  set -- $PT
  F=$(TYPE=$2 checkpoint $L /tmp/v $1)
  V=$($L inspect "$F" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
  printf '16 %s\n16 %s\n' "$(tokens $V 40 5)" "$(tokens $V 600 6)" > /tmp/v/$1.prompts
  timeout 150 $L measure "$F" "${K[@]}" --verify --prompts /tmp/v/$1.prompts --workload 64,16 --repeat 1 \
    --cache /tmp/v/cache --format json > $OUT/verify-$1.jsonl 2> $OUT/verify-$1.err
  echo "verify $1 rc=$?"
  python3 - $OUT/verify-$1.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"): continue
    r = json.loads(line); k = r.get("knobs", {})
    tag = f'{k.get("numerics")} chunk={k.get("max_chunk")} pq={k.get("gemv_prequant", False)} half={k.get("gemm_half", False)}'
    print(f'  {tag:44} verified={r.get("verified")} hash={r.get("logits_hash")} rel_l2={r.get("rel_l2", 0):.3g} '
          f'{(r.get("reason", "") + r.get("error", ""))[:160]}')
PY
done
. bench/calls/moe_side_by_side.sh
A='"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"kv_cache":"f16","attn_mma":2'
MOE_SETS=("{$A,\"max_chunk\":512}" "{$A,\"max_chunk\":256}")
moe qwen3-30b-a3b q8_0
NO_LLAMA=1 moe gpt-oss-20b mxfp4
