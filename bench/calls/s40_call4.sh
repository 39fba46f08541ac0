#!/usr/bin/env bash
# Session 40 call 4 (the device budget's last ~7 minutes): llama-3.1-8b Q4_K_M, a 3-minute job with two worker fixes
# against call 3's 4-minute one (188 configurations, GPU 66% mean, the host idle 39 s of 223 in 5 gaps): leased
# verifications no longer hold the search's queue (a 22-s gap while 8 of them waited on the CPU reference), and a
# worker whose plans all build leases more plans (two 5-7 s gaps). Prediction: GPU >= 80% mean over the measuring
# phase, the host's gaps under 10 s in all past the first build, >= 50 configurations a minute.
set -u
. bench/calls/prelude.sh
G=h200; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && G=h100
TYPE=q4_k_m TUNE_GPU=$G timeout 280 bash bench/tune_h200.sh $L /tmp/tq llama-3.1-8b 3m > $OUT/tune-8b-q4km.txt 2>&1
echo "== tune rc=$?"
grep -E "^job:|GPU util|cost \(median|where the|search's turns|best \(verified\)|h[12]00: model" $OUT/tune-8b-q4km.txt | cut -c1-300
cp /tmp/tq/job/results.json $OUT/results-8b-q4km.json 2> /dev/null; xz -9 $OUT/results-8b-q4km.json
