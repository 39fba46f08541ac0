#!/usr/bin/env bash
# Session 40 call 2 (same warm H100 as call 1): llama-3.1-8b Q4_K_M 4-minute tuning job with knobs::Sampler, then
# llama.cpp's llama-bench (built in call 1, /tmp/llama-bench) on the same file, side by side.
# Prediction: >= 150 configurations, >= 25 verified (session 39: 85 / 16), chosen decode >= 436 tok/s; llama.cpp on
# the H100 ~ 200-260 tok/s decode.
set -u
. bench/calls/prelude.sh
G=h200; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && G=h100
TUNE_GPU=$G timeout 330 bash bench/tune_h200.sh $L /tmp/tj8 llama-3.1-8b 4m > $OUT/tune-8b.txt 2>&1
echo "== tune rc=$?"
grep -E "^job:|GPU util|cost \(median|where the|search's turns|best \(verified\)|h[12]00: model" $OUT/tune-8b.txt | cut -c1-300
cp /tmp/tj8/job/results.json $OUT/results-8b.json 2> /dev/null; xz -9 $OUT/results-8b.json
F=$(ls /tmp/tj8/*.gguf | head -1); echo "file $F"
[ -x /tmp/llama-bench ] && timeout 120 /tmp/llama-bench -m "$F" -ngl 99 -p 512 -n 128 -r 3 -o md 2>&1 | tail -4
