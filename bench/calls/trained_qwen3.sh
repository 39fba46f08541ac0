# Sourced by the device calls' scripts after prelude.sh: qwen3-0.6b trained 25 s on local text (bench/train_checkpoint.py)
# as /tmp/w/q.gguf (f16) and /tmp/w/q8.gguf (q8_0), and /tmp/w/prompts: 4 prompts of the training text (40, 300, 1,200
# and 2,000 tokens, 16 generated each) for `measure --verify --prompts`.
mkdir -p /tmp/w
timeout 120 python3 bench/train_checkpoint.py $L qwen3-0.6b /tmp/w/q.gguf --seconds 25 --type f16 > $OUT/train.log 2>&1
echo "train rc=$?"; tail -1 $OUT/train.log
timeout 30 $L quantize /tmp/w/q.gguf --type q8_0 -o /tmp/w/q8.gguf -q
python3 - /tmp/w/q.gguf.text > /tmp/w/prompts <<'PY'
import sys, random
b = open(sys.argv[1], "rb").read()
r = random.Random(9)
for n in (40, 300, 1200, 2000):
    at = r.randrange(0, len(b) - n)
    print(16, " ".join(str(x) for x in b[at:at + n]))
PY
