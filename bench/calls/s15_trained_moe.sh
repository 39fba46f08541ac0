#!/usr/bin/env bash
# Session 15 (#17; ~6 minutes; carry .carry): the mixtures on trained weights. bench/train_checkpoint.py trains each
# model (transformers' qwen3moe / qwen2moe / gpt-oss, their experts mapped back into the checkpoint's tensors) on local
# text, then `measure --verify` judges every numerics against the CPU reference on prompts of that text (40 and 300
# tokens: the decode step and chunks past 256 rows): tiny-moe (q8_0, q4_k), tiny-qwen2moe, tiny-gpt-oss (q8_0, mxfp4),
# and the big shapes in their first 2 layers (synth --layers: qwen3-30b-a3b q8_0, gpt-oss-20b mxfp4).
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/t
# (JUDGE_SETS, one knob set a line, replaces these)
SETS=('{"numerics":"dequant"}'
      '{"numerics":"dequant","gemm_half":true,"max_chunk":64}'
      '{"numerics":"int8","fuse_qkv":true,"max_chunk":64,"gemv_rows_per_warp":2}'
      '{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"max_chunk":256,"pdl":true}'
      '{"numerics":"int8x2","max_chunk":16,"gemv_prequant":true}'
      '{"numerics":"int8","gemm_prequant":true,"gemv_prequant":true,"fuse_norm":true,"max_chunk":256}')
[ -z "${JUDGE_SETS:-}" ] || mapfile -t SETS <<< "$JUDGE_SETS"
K=(); for s in "${SETS[@]}"; do K+=(--knobs-json "$s"); done
# train NAME PRESET SECONDS [LAYERS]: /tmp/t/NAME.gguf (q8_0) and its prompts (PROMPT_LENS tokens each: 40 and 300)
train() {
  timeout ${TRAIN_TIMEOUT:-200} python3 bench/train_checkpoint.py $L $2 /tmp/t/$1.gguf --seconds $3 --type q8_0 ${4:+--layers $4} \
    > $OUT/train-$1.log 2>&1
  echo "train $1 rc=$? $(grep -E '^(TRAINED|WROTE|STAGE)' $OUT/train-$1.log | tr '\n' ' ')"
  python3 - /tmp/t/$1.gguf.text ${PROMPT_LENS:-40 300} > /tmp/t/$1.prompts <<'PY'
import sys, random
b = open(sys.argv[1], "rb").read()
r = random.Random(9)
for n in map(int, sys.argv[2:]):
    at = r.randrange(0, len(b) - n)
    print(16, " ".join(str(x) for x in b[at:at + n]))
PY
}
# judge NAME FILE: every set verified or not
judge() {
  timeout ${JUDGE_TIMEOUT:-240} $L measure "$2" "${K[@]}" --verify --prompts /tmp/t/$1.prompts --workload 64,16 --repeat 1 \
    --cache /tmp/t/cache --format json > $OUT/judge-$1.jsonl 2> $OUT/judge-$1.err
  echo "judge $1 rc=$?"
  python3 - $1 $OUT/judge-$1.jsonl <<'PY'
import json, sys
for line in open(sys.argv[2]):
    if not line.startswith("{"): continue
    r = json.loads(line); k = r.get("knobs", {})
    tag = k.get("numerics", "") + (" half" if k.get("gemm_half") else "") + (" prequant" if k.get("gemm_prequant") else "")
    print(f'  {sys.argv[1]:16} {tag:22} verified={r.get("verified")} rel_l2={r.get("rel_l2", 0):.3g} '
          f'{(r.get("reason", "") + r.get("error", ""))[:150]}')
PY
}
# ONLY="tiny q30-2l oss20-2l" (the default: all three parts) picks parts; OSS_SECONDS the gpt-oss-20b shape's training.
want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
TINY_JUDGED=${TINY_JUDGED:-tiny-moe tiny-moe-q4k tiny-qwen2moe tiny-gpt-oss tiny-gpt-oss-mxfp4}
judged() { [[ " $TINY_JUDGED " == *" $1"* ]]; }  # (a judged name begins with this model's)
if want tiny; then
  if judged tiny-moe; then
    train tiny-moe tiny-moe 20
    timeout 30 $L quantize /tmp/t/tiny-moe.gguf --type q4_k -o /tmp/t/tiny-moe-q4k.gguf -q; cp /tmp/t/tiny-moe.prompts /tmp/t/tiny-moe-q4k.prompts
  fi
  judged tiny-qwen2moe && train tiny-qwen2moe tiny-qwen2moe 20
  if judged tiny-gpt-oss; then
    train tiny-gpt-oss tiny-gpt-oss 20
    timeout 30 $L quantize /tmp/t/tiny-gpt-oss.gguf --type mxfp4 -o /tmp/t/tiny-gpt-oss-mxfp4.gguf -q; cp /tmp/t/tiny-gpt-oss.prompts /tmp/t/tiny-gpt-oss-mxfp4.prompts
  fi
  for n in $TINY_JUDGED; do judge $n /tmp/t/$n.gguf; done
fi
if want q30-2l; then
  train q30-2l qwen3-30b-a3b 40 2
  judge q30-2l /tmp/t/q30-2l.gguf
fi
if want oss20-2l; then
  train oss20-2l gpt-oss-20b ${OSS_SECONDS:-40} 2
  timeout 120 $L quantize /tmp/t/oss20-2l.gguf --type mxfp4 -o /tmp/t/oss20-2l-mxfp4.gguf -q; cp /tmp/t/oss20-2l.prompts /tmp/t/oss20-2l-mxfp4.prompts
  judge oss20-2l-mxfp4 /tmp/t/oss20-2l-mxfp4.gguf
fi
