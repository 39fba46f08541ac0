#!/usr/bin/env bash
# Session 40 call 3 (the warm H100 of calls 1-2, which ran Q8_0 files: common.sh's default type): the Q4_K_M jobs
# session 39 measured, now with knobs::Sampler: qwen3-0.6b 2 minutes, llama-3.1-8b 4 minutes, then llama-bench (call
# 1's build) on the 8B file. Session 39 (same kind): 0.6B 68 configurations / 17 verified / 98.5 ms workload; 8B 85 /
# 16 / 436.3 tok/s. Prediction: 0.6B >= 150 / 30; 8B >= 150 / 20; llama.cpp 8B Q4_K_M on an H100 ~ 250-300 tok/s.
set -u
. bench/calls/prelude.sh
G=h200; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && G=h100
for j in "qwen3-0.6b 2m 170" "llama-3.1-8b 4m 320"; do
  set -- $j
  TYPE=q4_k_m TUNE_GPU=$G timeout $3 bash bench/tune_h200.sh $L /tmp/tq-$1 $1 $2 > $OUT/tune-$1-q4km.txt 2>&1
  echo "== $1 tune rc=$?"
  grep -E "^job:|GPU util|cost \(median|where the|search's turns|best \(verified\)|h[12]00: model" $OUT/tune-$1-q4km.txt | cut -c1-300
  cp /tmp/tq-$1/job/results.json $OUT/results-$1-q4km.json 2> /dev/null; xz -9 $OUT/results-$1-q4km.json
done
F=$(ls /tmp/tq-llama-3.1-8b/*.gguf | head -1); echo "file $F"
[ -x /tmp/llama-bench ] && timeout 100 /tmp/llama-bench -m "$F" -ngl 99 -p 512 -n 128 -r 3 -o md 2>&1 | tail -4
