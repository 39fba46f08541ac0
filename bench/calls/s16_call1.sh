#!/usr/bin/env bash
# For the next GPU session, call 1 (~8 minutes; carry .carry, .llama/llama-bench.xz and .llama/lib): #17's speed side by
# side, as s15_side_by_side.sh's mixtures part meant to (its lane-tune could not build the precise reference lane):
# qwen3-30b-a3b Q8_0 and gpt-oss-20b MXFP4 (synth, random weights: timing only; the sets verified on the trained
# shapes in s15_trained_moe.sh), decode after a 512-token prompt and prefill(512), against llama-bench pp512/tg128 on
# the same files; `measure --format json` so that a failure says why. Then gpt-oss-20b's shape in its first 2 layers
# trained (20 s) and judged under the 6 sets (s15_trained_moe.sh's, which ran out of time there).
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.llama/lib  # (llama-bench's libgomp and NCCL stand-in, bench/nccl_stub.c)
. bench/common.sh
mkdir -p /tmp/m
moe() {  # moe PRESET TYPE
  local F; F=$(TYPE=$2 checkpoint $L /tmp/m $1)
  local V; V=$($L inspect "$F" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
  printf '128 %s\n' "$(tokens $V 512 3)" > /tmp/m/$1.prompts
  timeout 200 $L measure "$F" --knobs-json '{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"max_chunk":256,"pdl":true}' \
    --knobs-json '{"numerics":"dequant","gemm_half":true,"max_chunk":256,"fuse_qkv":true,"pdl":true}' \
    --prompts /tmp/m/$1.prompts --workload 512,128 --repeat 3 --cache /tmp/m/cache --format json > $OUT/moe-$1.jsonl 2> $OUT/moe-$1.err
  echo "lane $1 $2 rc=$?"
  python3 - $OUT/moe-$1.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"): continue
    r = json.loads(line); k = r.get("knobs", {})
    print(f'  {k.get("numerics")} half={k.get("gemm_half")} decode_ms={r.get("decode_ms", 0):.3f} '
          f'prefill_ms={r.get("prefill_ms", 0):.1f} {(r.get("reason", "") + " " + r.get("error", ""))[:300]}')
PY
  timeout 80 /tmp/llama-bench -m "$F" -p 512 -n 128 -fa 1 -ngl 99 -r 3 > $OUT/llama-$1.txt 2>&1
  echo "llama-bench $1 rc=$?"; grep -E "pp512|tg128|error|failed" $OUT/llama-$1.txt | head -4
  rm -f "$F"
}
moe qwen3-30b-a3b q8_0
moe gpt-oss-20b mxfp4
ONLY=oss20-2l OSS_SECONDS=20 timeout 280 bash bench/calls/s15_trained_moe.sh
