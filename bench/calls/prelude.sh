# Sourced by the device calls' scripts: the carried lane-tune bundle unpacked, its libraries and nvcc in the paths.
mkdir -p /tmp/c && tar xJf .carry/bundle.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu LT_NVCC=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH
L=/tmp/c/lane-tune
G=h200; nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | grep -q H100 && G=h100  # the kind to submit for

# A tuning job (bench/tune_h200.sh, $TYPE's file) with its summary printed and its results kept under $OUT:
# usage: tune_job NAME PRESET BUDGET TIMEOUT_S  (writes $OUT/tune-NAME.txt and $OUT/results-NAME.json.xz)
tune_job() {
  TUNE_GPU=$G timeout "$4" bash bench/tune_h200.sh $L "/tmp/tj-$1" "$2" "$3" > "$OUT/tune-$1.txt" 2>&1
  echo "== $1 tune rc=$?"
  grep -E "^job:|GPU util|cost \(median|where the|host between|search's turns|best \(verified\)|h[12]00: model" "$OUT/tune-$1.txt" |
    cut -c1-300
  cp "/tmp/tj-$1/job/results.json" "$OUT/results-$1.json" 2> /dev/null && xz -9 "$OUT/results-$1.json"
}

# Prompts of a trained checkpoint's own text (train_checkpoint.py's OUT.gguf.text), a line each as `measure --prompts`
# reads them: usage: text_prompts TEXT SEED GENERATED LENGTH...  (prints the lines)
text_prompts() {
  python3 - "$@" <<'PY'
import sys, random
b = open(sys.argv[1], "rb").read()
r = random.Random(int(sys.argv[2]))
for n in map(int, sys.argv[4:]):
    at = r.randrange(0, len(b) - n)
    print(sys.argv[3], " ".join(str(x) for x in b[at:at + n]))
PY
}
