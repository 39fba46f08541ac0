#!/usr/bin/env bash
# Prepared in session 39 (~8 minutes; carry .carry rebuilt at the tree and .llama/src.tar.xz): the 2-minute tuning job
# on qwen3-0.6b Q4_K_M with knobs::Sampler (the model search's 2,000 draws a turn in milliseconds; session 39's call 3
# left the worker 7-11 s without plans between bursts of ~8), the coordinator's log kept (its search_proposed lines).
# Prediction: >= 100 configurations, >= 20 verified, GPU >= 40% busy, search turns under 100 ms at the median. Then
# llama.cpp's llama-bench built (this checkout has none) and sent back in pieces (cat into .llama/llama-bench.xz).
set -u
. bench/calls/prelude.sh
G=h200; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && G=h100
TUNE_GPU=$G timeout 200 bash bench/tune_h200.sh $L /tmp/tj qwen3-0.6b 2m > $OUT/tune-06b.txt 2>&1
echo "== tune rc=$?"
grep -E "^job:|GPU util|cost \(median|where the|search's turns|best \(verified\)|h[12]00: model" $OUT/tune-06b.txt | cut -c1-300
cp /tmp/tj/job/results.json /tmp/tj/job/coordinator.log /tmp/tj/job/worker-0.log $OUT/ 2> /dev/null
xz -9 $OUT/results.json $OUT/coordinator.log $OUT/worker-0.log 2> /dev/null
export PATH=/usr/local/cuda/bin:$PATH
timeout 330 bash bench/llama_build.sh .llama/src.tar.xz /tmp/ll /tmp/llama-bench > /tmp/llbuild.log 2>&1 &&
  xz -T8 -6 -c /tmp/llama-bench > /tmp/llama-bench.xz && split -b 15M -d /tmp/llama-bench.xz $OUT/llama-bench.xz.part
echo "llama build rc=$?"; tail -2 /tmp/llbuild.log; ls -la $OUT
