# Session 11, call 1: the compact caches and the attention a lane a position on trained weights (#19's tolerances on
# real margins): qwen3-0.6b trained 25 s (bench/train_checkpoint.py, f16), requantized to q8_0, each knob set judged by
# `measure --verify` (the precise lane against the CPU reference, then the set's logits against the precise lane's
# within its numerics' and cache's bound, tokens, --stagger), prompts from the training text, a workload at depth 2048.
# Then the mixtures' CPU reference against transformers (#17, helper's bench/check_transformers.py).
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/w
timeout 120 python3 bench/train_checkpoint.py $L qwen3-0.6b /tmp/w/q.gguf --seconds 25 --type f16 > $OUT/train.log 2>&1
echo "train rc=$? $(date)"; tail -2 $OUT/train.log
timeout 30 $L quantize /tmp/w/q.gguf --type q8_0 -o /tmp/w/q8.gguf -q
python3 - /tmp/w/q.gguf.text > /tmp/w/prompts <<'PY'
import sys, random
b = open(sys.argv[1], "rb").read()
r = random.Random(5)
for n in (40, 300, 1200):
    at = r.randrange(0, len(b) - n)
    print(8, " ".join(str(x) for x in b[at:at + n]))
PY
I='"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true'
K=()
for extra in '' ',"attn_lanes":true' ',"kv_cache":"f16","attn_lanes":true' ',"kv_cache":"bf16","attn_lanes":true,"attn_splits":8' \
             ',"kv_cache":"q8_0","attn_lanes":true' ',"kv_cache":"q8_0"' ',"kv_cache":"f16","fuse_rope":true,"attn_lanes":true'; do
  K+=("--knobs-json" "{$I$extra}")
done
K+=("--knobs-json" '{"numerics":"dequant","kv_cache":"f16","attn_lanes":true,"max_chunk":64}')
K+=("--knobs-json" '{"numerics":"dequant","kv_cache":"q8_0","max_chunk":64,"attn_heads":2}')
timeout 300 $L measure /tmp/w/q8.gguf "${K[@]}" --verify --prompts /tmp/w/prompts --workload 2048,64 --repeat 3 --cache /tmp/w/cache > $OUT/measure.txt 2>&1
echo "measure rc=$?"
grep -E "valid|INVALID|rel_l2|error" $OUT/measure.txt | head -40
mkdir -p /tmp/ct
for p in tiny-moe tiny-qwen2moe tiny-gpt-oss; do $L synth --preset $p --type f32 -o /tmp/ct/$p.gguf -q; done
timeout 150 python3 bench/check_transformers.py $L /tmp/ct/tiny-moe.gguf /tmp/ct/tiny-qwen2moe.gguf /tmp/ct/tiny-gpt-oss.gguf > $OUT/transformers.txt 2>&1
echo "transformers rc=$?"; grep -E "LAYOUT|ROPE|RESULT|CHECK|Error|error" $OUT/transformers.txt | head -30
