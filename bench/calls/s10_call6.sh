# Session 10, call 6: trained checkpoints in the block formats (#16's correctness on real margins): qwen3-0.6b trained
# for 25 s on local text (bench/train_checkpoint.py, f16), requantized by `lane-tune quantize` to each type, and each
# judged by `measure --verify` (the CPU reference: logits within the numerics' bound, tokens, --stagger), prompts drawn
# from the training text.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/w
timeout 120 python3 bench/train_checkpoint.py $L qwen3-0.6b /tmp/w/q.gguf --seconds 25 --type f16 > $OUT/train.log 2>&1
echo "train rc=$? $(date)"; tail -4 $OUT/train.log
B='{"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"gemm_tile":128,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"cuda_graphs":true,"gemv_rows_per_warp":1}'
D='{"numerics":"dequant","fuse_qkv":true,"fuse_glu":true,"max_chunk":64,"pdl":true}'
python3 - /tmp/w/q.gguf.text > /tmp/w/prompts <<'PY'
import sys, random
b = open(sys.argv[1], "rb").read()
r = random.Random(5)
for n in (40, 300):
    at = r.randrange(0, len(b) - n)
    print(8, " ".join(str(x) for x in b[at:at + n]))
PY
for T in q4_k_m q5_k_m q6_k q4_0 mxfp4 iq4_xs; do
  timeout 30 $L quantize /tmp/w/q.gguf --type $T -o /tmp/w/q-$T.gguf -q || { echo "$T quantize FAIL"; continue; }
  K=("--knobs-json" "$B"); [ $T = q4_k_m ] && K+=("--knobs-json" "$D")
  case $T in q4_k_m|q5_k_m|q6_k) K[1]="${B%\}},\"gemv_rows_q6_k\":2}" ;; esac
  timeout 90 $L measure /tmp/w/q-$T.gguf "${K[@]}" --verify --prompts /tmp/w/prompts --workload 64,16 --repeat 1 --cache /tmp/w/cache > $OUT/measure-$T.txt 2>&1
  echo "$T rc=$? $(grep -c ' valid ' $OUT/measure-$T.txt) valid of ${#K[@]}/2; $(grep -o 'rel[^ ]*l2[^ ]*' $OUT/measure-$T.txt | head -2 | tr '\n' ' ')"
  grep -E "INVALID|invalid|error" $OUT/measure-$T.txt | head -3
done
