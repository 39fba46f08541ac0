# Session 13: gpt-oss's attention in the lane on the H200 (#17's remaining part: sinks, sliding windows, YaRN rope, the
# output bias). tiny-gpt-oss (q8_0, and its experts in MXFP4) through `measure --verify` (the logits against the CPU
# reference within the numerics' bound, the tokens, --stagger bit for bit) on prompts of 5, 40 and 200 tokens (past the
# sliding window of 128, so that it cuts), under knob sets that take every attention path: lk_attention whole and split
# (the sinks in the fold), lk_attention_lanes, lk_attention_mma in its chunk and STEP shapes over an f16 cache, the
# folded norm (the output bias in lk_gemv_norm), int8 (the tensor cores' GEMMs with the bias). A line a configuration:
# "verified" or "FAILED <failure>: <reason>". Then the release's program (lane.cu) against the reference, and under
# --stagger 7 bit for bit. About 5 minutes at most (each step under a timeout).
set -u
. bench/calls/prelude.sh
. bench/common.sh
W=/tmp/gptoss
mkdir -p "$W"
SETS=(
  '{"numerics":"dequant"}'
  '{"numerics":"dequant","attn_splits":1,"max_chunk":64}'
  '{"numerics":"precise","max_chunk":16,"fuse_norm":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_norm":true,"max_chunk":64}'
  '{"numerics":"int8x2","gemv_prequant":true,"max_chunk":16}'
  '{"numerics":"dequant","kv_cache":"f16","attn_mma":2,"attn_splits":1,"max_chunk":64}'
  '{"numerics":"dequant","kv_cache":"f16","attn_mma":2,"attn_splits":4,"max_chunk":4}'
  '{"numerics":"dequant","kv_cache":"f16","attn_mma":1,"attn_splits":1,"max_chunk":256}'
  '{"numerics":"dequant","attn_splits":4,"max_chunk":16}'
  '{"numerics":"dequant","attn_lanes":true,"attn_splits":1,"max_chunk":64}'
  '{"numerics":"dequant","kv_cache":"f16","attn_lanes":true,"attn_splits":4,"fuse_rope_kv":true,"max_chunk":16}'
)
F=$(checkpoint "$L" "$W" tiny-gpt-oss)
V=$("$L" inspect "$F" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
PROMPT_LENS="5 40 200" prompts "$V" "$W/check.prompts" 8
# q8_0 under every set (150 s at most); the experts in MXFP4 under dequant, int8 and attn_mma 2 (75 s at most).
for T in ${TYPES:-q8_0 mxfp4}; do  # (TYPES=q8_0: the q8_0 part alone)
  G=$(TYPE=$T checkpoint "$L" "$W" tiny-gpt-oss)
  args=()
  picks=("${!SETS[@]}"); limit=150
  [ $T = mxfp4 ] && picks=(0 3 5) && limit=75
  for i in "${picks[@]}"; do args+=(--knobs-json "${SETS[$i]}"); done
  timeout $limit "$L" measure "$G" "${args[@]}" --verify --prompts "$W/check.prompts" --workload 200,16 --repeat 1 \
    --cache "$W/cache" --json > "$W/$T.measure" 2> "$W/$T.err"
  echo "measure rc=$?"
  python3 - "$W/$T.measure" "$T" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    verdict = "verified" if r["verified"] else "FAILED %s: %s" % (r["failure"], r["reason"][:160])
    print("tiny-gpt-oss %s %s: %s (rel_l2 %.3g)" % (sys.argv[2], json.dumps(r["knobs"], separators=(",", ":")),
                                                  verdict, r["rel_l2"]))
PY
  echo "tiny-gpt-oss $T: $(grep -c '"verified":true' "$W/$T.measure") of ${#picks[@]} verified"
  [ -s "$W/$T.measure" ] || tail -5 "$W/$T.err"
done

[ -n "${NO_RELEASE:-}" ] && exit 0  # (NO_RELEASE=1: the measures alone)

# The release's program: compiled, built side by side, its logits against the reference's (dequant's bound; over an
# f16 cache its bound, 1e-3), then under --stagger 7.
reference_prompts "$L" "$F" "$W/check.prompts" "$W/check.ref" || echo "reference FAILED"
RELEASE=("${SETS[0]}" "${SETS[5]}")
: > "$W/lanes"
for i in "${!RELEASE[@]}"; do
  echo "${RELEASE[$i]}" > "$W/k$i.json"
  "$L" compile "$F" --knobs "$W/k$i.json" -o "$W/lane$i" > /dev/null && echo "$W/lane$i" >> "$W/lanes"
done
timeout 150 bash -c ". bench/common.sh; build_all '$L' '$W/lanes'"
for i in "${!RELEASE[@]}"; do
  K=${RELEASE[$i]} D="$W/lane$i"
  [ -x "$D/lane" ] || { echo "lane.cu tiny-gpt-oss $K: build FAILED"; continue; }
  tol=1e-5; [[ $K == *f16* ]] && tol=1e-3
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/check.prompts" --logits "$D/out.bin" > "$D/out.txt" 2>&1
  echo "lane.cu tiny-gpt-oss $K: $(python3 "$BENCH/compare_logits.py" "$W/check.ref.bin" "$D/out.bin" "$V" \
    --tol $tol --ref-tokens "$W/check.ref.txt" --out-tokens "$D/out.txt")"
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/check.prompts" --logits "$D/stagger.bin" --stagger 7 > /dev/null 2>&1
  s=DIFFER; cmp -s "$D/out.bin" "$D/stagger.bin" && s=bit-equal
  echo "lane.cu tiny-gpt-oss $K --stagger 7: $s"
done
