#!/usr/bin/env bash
# The mixtures in the lane (issue #17: qwen3moe, qwen2moe) on a GPU machine:
#  1. tiny-moe and tiny-qwen2moe through `lane-tune measure --verify` (the resident host, as a worker measures: the
#     logits against the CPU reference within the numerics' bound, the tokens, --stagger bit for bit), under knob sets
#     that cover the numerics, the chunks (grouped by expert) and the fusions that apply;
#  2. the release's program (lane.cu: its own uploads of the 3-D expert tensors) for tiny-moe in q8_0 and q4_k, its
#     logits against the reference's;
#  3. a bigger qwen3moe (BIG, qwen3-30b-a3b in q8_0 by default): measure --verify on short prompts, then decode and
#     prefill(512) speed of a few knob sets.
# Prints a line a configuration, then a table.
#
# usage: [BIG=qwen3-30b-a3b] [BIG_TYPE=q8_0] [SKIP_BIG=1] bench/moe_check.sh LT WORKDIR
set -uo pipefail
LT=$1; W=$2
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
SETS=(
  '{"numerics":"dequant"}'
  '{"numerics":"precise","max_chunk":16,"fuse_norm":true}'
  '{"numerics":"dequant","fuse_qkv":true,"fuse_rope_kv":true,"fuse_rope":true,"fuse_norm":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"dequant","max_chunk":256,"side_streams":true,"cuda_graphs":false}'
  '{"numerics":"int8","fuse_qkv":true,"max_chunk":64,"gemv_rows_per_warp":2}'
  '{"numerics":"int8x2","max_chunk":16,"gemv_prequant":true}'
  '{"numerics":"int8","gemm_prequant":true,"gemv_prequant":true,"fuse_norm":true,"max_chunk":256}'
  # 7-8: the chunks' experts on the tensor cores in f16 (gemm_half: lk_moe_gemm_h over the grouped pairs)
  '{"numerics":"dequant","gemm_half":true,"max_chunk":64}'
  '{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"max_chunk":256,"pdl":true}'
)
SHARED_SETS=('{"numerics":"dequant","fuse_glu":true,"max_chunk":64}' '{"numerics":"int8x2","fuse_glu":true,"gemm_prequant":true,"max_chunk":64}')
TABLE="$W/moe.txt"
: > "$TABLE"
for P in tiny-moe tiny-qwen2moe; do
  args=()
  for s in "${SETS[@]}"; do args+=(--knobs-json "$s"); done
  [ $P = tiny-qwen2moe ] && for s in "${SHARED_SETS[@]}"; do args+=(--knobs-json "$s"); done
  F=$(checkpoint "$LT" "$W" "$P")
  "$LT" measure "$F" "${args[@]}" --verify --workload 64,16 --repeat 1 --cache "$W/cache" > "$W/$P.measure" 2> "$W/$P.err"
  echo "$P: $(grep -c ' verified ' "$W/$P.measure") of $((${#args[@]} / 2)) valid" | tee -a "$TABLE"
  grep -E '^ +[0-9]+ +(failed|screened) ' "$W/$P.measure" | cut -c1-240 | head -4
  [ -s "$W/$P.measure" ] || tail -3 "$W/$P.err"
done

# The release's program: compiled, built, its logits against the reference's (prompts past the 256-row chunk).
for T in q8_0 q4_k; do
  F=$(TYPE=$T checkpoint "$LT" "$W" tiny-moe)
  D="$W/lane-$T"
  echo "${SETS[3]}" > "$W/k.json"
  "$LT" compile "$F" --knobs "$W/k.json" -o "$D" > /dev/null && "$LT" build "$D" --arch sm_90 > /dev/null || {
    echo "lane.cu tiny-moe $T: build FAIL" | tee -a "$TABLE"; continue; }
  V=$(vocab "$D")
  prompts "$V" "$W/$T.prompts" 8
  reference_prompts "$LT" "$F" "$W/$T.prompts" "$W/$T.ref"
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$T.prompts" --logits "$W/$T.out.bin" > "$W/$T.out.txt" 2>&1
  echo "lane.cu tiny-moe $T: $(python3 "$BENCH/compare_logits.py" "$W/$T.ref.bin" "$W/$T.out.bin" "$V" --tol 1e-5 \
    --ref-tokens "$W/$T.ref.txt" --out-tokens "$W/$T.out.txt")" | tee -a "$TABLE"
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$T.prompts" --logits "$W/$T.stagger.bin" --stagger 7 > /dev/null 2>&1
  s=DIFFER; cmp -s "$W/$T.out.bin" "$W/$T.stagger.bin" && s=bit-equal
  echo "lane.cu tiny-moe $T --stagger 7: $s" | tee -a "$TABLE"
done

# The bigger qwen3moe: verified on short prompts (the CPU reference runs its active experts only), then timed.
[ -n "${SKIP_BIG:-}" ] && exit 0
B=${BIG:-qwen3-30b-a3b}
F=$(TYPE=${BIG_TYPE:-q8_0} checkpoint "$LT" "$W" "$B")
V=$("$LT" inspect "$F" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
PROMPT_LENS="5 40" prompts "$V" "$W/big.prompts" 4
big=()
for i in 0 2 4 6 8; do big+=(--knobs-json "${SETS[$i]}"); done
"$LT" measure "$F" "${big[@]}" --verify --prompts "$W/big.prompts" --workload 64,16 --repeat 1 --cache "$W/cache" \
  > "$W/big.measure" 2> "$W/big.err"
echo "$B verify: $(grep -c ' verified ' "$W/big.measure") of $((${#big[@]} / 2)) valid" | tee -a "$TABLE"
grep -E '^ +[0-9]+ +(failed|screened) ' "$W/big.measure" | cut -c1-240 | head -4
"$LT" measure "$F" "${big[@]}" --prompts "$W/big.prompts" --workload 512,128 --repeat 3 --cache "$W/cache" \
  > "$W/big.speed" 2> "$W/big.speed.err"
cat "$W/big.speed" | tee -a "$TABLE"
echo "---"; cat "$TABLE"
