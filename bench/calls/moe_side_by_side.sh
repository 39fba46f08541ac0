# Sourced by the device calls' scripts after prelude.sh and bench/common.sh, with /tmp/llama-bench unpacked:
# `moe PRESET TYPE` synthesizes the mixture (random weights: timing only), times our lane under the sets MOE_SETS (an
# array; by default int8 and dequant, both with gemm_half, verified on the trained shapes in s15_trained_moe.sh) by
# `measure --format json` (decode after a 512-token prompt, prefill(512); a failure says why), then (unless NO_LLAMA)
# llama-bench pp512/tg128 on the same file, into $OUT/moe-PRESET.jsonl and $OUT/llama-PRESET.txt; the file is removed
# after.
# MOE_512: the set of sessions 16-17 (int8, gemm_half, gemv_prequant, fused q/k/v, pdl, f16 cache, attn_mma 2, chunks of
# 512), judged on the trained mixtures.
MOE_512='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512}'
MOE_SETS=(${MOE_SETS[@]+"${MOE_SETS[@]}"})
[ ${#MOE_SETS[@]} -gt 0 ] || MOE_SETS=(
  '{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"max_chunk":256,"pdl":true}'
  '{"numerics":"dequant","gemm_half":true,"max_chunk":256,"fuse_qkv":true,"pdl":true}')
mkdir -p /tmp/m
moe() {
  local F; F=$(TYPE=$2 checkpoint $L /tmp/m $1)
  local V; V=$($L inspect "$F" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
  printf '128 %s\n' "$(tokens $V 512 3)" > /tmp/m/$1.prompts
  local K=() s
  for s in "${MOE_SETS[@]}"; do K+=(--knobs-json "$s"); done
  timeout 200 $L measure "$F" "${K[@]}" --prompts /tmp/m/$1.prompts --workload 512,128 --repeat 3 --cache /tmp/m/cache --format json > $OUT/moe-$1.jsonl 2> $OUT/moe-$1.err
  echo "lane $1 $2 rc=$?"
  python3 - $OUT/moe-$1.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"): continue
    r = json.loads(line); k = r.get("knobs", {})
    print(f'  {k.get("numerics")} half={k.get("gemm_half")} chunk={k.get("max_chunk")} decode_ms={r.get("decode_ms", 0):.3f} '
          f'prefill_ms={r.get("prefill_ms", 0):.1f} {(r.get("reason", "") + " " + r.get("error", ""))[:300]}')
PY
  if [ -z "${NO_LLAMA:-}" ]; then
    timeout 80 /tmp/llama-bench -m "$F" -p 512 -n 128 -fa 1 -ngl 99 -r 3 > $OUT/llama-$1.txt 2>&1
    echo "llama-bench $1 rc=$?"; grep -E "pp512|tg128|error|failed" $OUT/llama-$1.txt | head -4
  fi
  rm -f "$F"
}
