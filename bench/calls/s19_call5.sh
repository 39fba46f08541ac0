#!/usr/bin/env bash
# Session 19, call 5 (~5 minutes; carry .carry, .llama/llama-bench.xz): the lane's load pipelined (a slice of the
# matrix repacked into pinned staging while the copy stream takes the one before). (1) The same weights: tiny-llama in
# seven types judged by `measure --verify` (dequant and int8; the reference, tokens, --stagger), and a q4_k_m lane run
# with half its device bytes (matrices moved to mapped host memory) against the same lane in full: the same logits.
# (2) bench/load.sh on llama-3.1-8b Q4_K_M again (call 4: 2.04 s, weights resident at 1.93 s; llama-bench 1.25 s).
# Prediction: resident at ~1.0-1.3 s.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
. bench/common.sh
mkdir -p /tmp/v
for t in q8_0 q4_k_m q5_k_m q4_0 mxfp4 iq4_xs f16; do
  ( F=$(TYPE=$t checkpoint $L /tmp/v tiny-llama)
    timeout 150 $L measure "$F" --knobs-json '{"numerics":"dequant","max_chunk":16}' --knobs-json '{"numerics":"int8","max_chunk":16}' \
      --verify --workload 64,16 --repeat 1 --cache /tmp/v/cache-$t --format json > /tmp/v/$t.jsonl 2> /tmp/v/$t.err
    python3 - $t /tmp/v/$t.jsonl <<'PY'
import json, sys
for line in open(sys.argv[2]):
    if line.startswith("{"):
        r = json.loads(line)
        print(f'verify {sys.argv[1]:7} {r["knobs"].get("numerics"):8} verified={r.get("verified")} rel_l2={r.get("rel_l2", 0):.3g} {r.get("reason", "")[:120]}')
PY
  ) &
done
wait
F=$(TYPE=q4_k_m checkpoint $L /tmp/v tiny-llama)
$L compile "$F" -o /tmp/v/lk > /dev/null && $L build /tmp/v/lk --arch sm_90 > /dev/null 2>&1
printf "8 %s\n" "$(tokens $(vocab /tmp/v/lk) 40 3)" > /tmp/v/p
/tmp/v/lk/lane "$F" /tmp/v/lk/lane.sidecar --prompts /tmp/v/p --logits /tmp/v/full.bin > /tmp/v/full.txt 2>&1
DB=$(awk '/^DEVICE_BYTES:/ {print $2}' /tmp/v/full.txt)
/tmp/v/lk/lane "$F" /tmp/v/lk/lane.sidecar --prompts /tmp/v/p --logits /tmp/v/half.bin --device-bytes $((DB / 2)) > /tmp/v/half.txt 2>&1
echo "moved: $(grep -h "^MOVED" /tmp/v/full.txt /tmp/v/half.txt | tr "\n" " ") logits $(cmp -s /tmp/v/full.bin /tmp/v/half.bin && echo equal || echo DIFFER)"
grep -h TOKENS /tmp/v/full.txt /tmp/v/half.txt | uniq -c | cut -c1-80
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2'
TYPE=q4_k_m KNOBS="$B,\"max_chunk\":256}" timeout 200 bash bench/load.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b 2>&1 | tee $OUT/load.txt | tail -5
