#!/usr/bin/env bash
# Session 35 (~9 minutes; carry .carry, this tree's build): the product's loop as the round-2 user ran it, on today's
# space: `lane-tune submit llama-3.1-8b Q4_K_M --gpus h200 --time-budget 5m` through a real coordinator and worker
# (bench/tune_h200.sh, cold caches, the default strategy and objective), no tuning job having run on the 8B since
# session 7 (25 sessions of knobs since). Then, in the time left, bench/shapes.sh's 6 random shapes x 3 points judged
# by the worker's rule (s35_call3.sh's first part). Prediction: the job screens the priors first, so its chosen
# configuration is the record's set or one within ~3% of it (~540-555 tok/s decode after a 5-token prompt, prefill(512)
# ~16,000), every chosen point verified; >= 40 configurations measured, GPU busy > 50%.
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
TYPE=q4_k_m timeout 470 bash bench/tune_h200.sh $L /tmp/tj llama-3.1-8b ${BUDGET:-5m} > $OUT/tune.txt 2>&1
echo "tune rc=$? after $(( $(date +%s) - T0 )) s"
tail -22 $OUT/tune.txt | cut -c1-400
cp /tmp/tj/job/results.json /tmp/tj/job/progress.txt /tmp/tj/job/best.txt $OUT/ 2> /dev/null
xz -9 $OUT/results.json 2> /dev/null
left=$((${LIMIT:-575} - ($(date +%s) - T0)))
if [ "$left" -gt 90 ]; then
  timeout $((left - 5)) bash bench/shapes.sh $L /tmp/shp 6 3 > $OUT/shapes.log 2>&1
  echo "shapes rc=$?"
  grep -E "^====|verdict|FAIL|NO POINT|DIFFERS|rc=" $OUT/shapes.log | grep -v "^==== sweep" | cut -c1-160 | head -30
fi
