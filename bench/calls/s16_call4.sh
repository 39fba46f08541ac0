#!/usr/bin/env bash
# Session 16, call 4 (18 s, the machine still warm; carry .carry): call 3's failing set taken apart on tiny-qwen2moe
# (random weights), `measure --verify`, prompts of 40 and 600 tokens: int8x2 + gemv_prequant, int8x2 + gemm_half in
# chunks of 512, dequant + gemm_half + f16 cache + attn_mma 2 in chunks of 512 and of 256.
set -u
. bench/calls/prelude.sh
. bench/common.sh
mkdir -p /tmp/v
F=$(TYPE=q8_0 checkpoint $L /tmp/v tiny-qwen2moe)
V=$($L inspect "$F" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
printf '16 %s\n16 %s\n' "$(tokens $V 40 5)" "$(tokens $V 600 6)" > /tmp/v/p.prompts
timeout 140 $L measure "$F" --knobs-json '{"numerics":"int8x2","max_chunk":64,"gemv_prequant":true}' \
 --knobs-json '{"numerics":"int8x2","max_chunk":512,"gemm_half":true}' \
 --knobs-json '{"numerics":"dequant","max_chunk":512,"gemm_half":true,"kv_cache":"f16","attn_mma":2}' \
 --knobs-json '{"numerics":"dequant","max_chunk":256,"gemm_half":true,"kv_cache":"f16","attn_mma":2}' \
 --verify --prompts /tmp/v/p.prompts --workload 64,16 --repeat 1 --cache /tmp/v/cache --format json 2>/dev/null | python3 -c '
import json,sys
for line in sys.stdin:
    if not line.startswith("{"): continue
    r=json.loads(line); k=r.get("knobs",{})
    print(k, r.get("verified"), r.get("rel_l2"), (r.get("reason","")+r.get("error",""))[:120])'
