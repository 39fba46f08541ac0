#!/usr/bin/env bash
# Session 35: session 34's two prepared calls in one (the device releases a machine 30 s after a call, so each call
# pays a cold start): bench/calls/s34_fold.sh first (attn_fold_launch verified, then depth 32k on the 8B against the
# record's set), then as many of s34_shapes.sh's random shapes as the call's remaining time holds (4 shapes x 3 points).
# Predictions as in those scripts: verified; 32k decode 311 -> ~318 at 32 splits with the fold launch, ~312 at 64;
# every shape's points verified.
set -u
T0=$(date +%s)
bash bench/calls/s34_fold.sh
left=$((560 - ($(date +%s) - T0)))
echo "fold+depth took $(( $(date +%s) - T0 )) s; $left s left for the shapes"
if [ "$left" -gt 90 ]; then
  . bench/calls/prelude.sh
  timeout $((left - 10)) bash bench/shapes.sh $L /tmp/shp 4 3 > $OUT/shapes.log 2>&1
  echo "shapes rc=$?"
  grep -E "^====|verdict|FAIL|NO POINT|DIFFERS|rc=" $OUT/shapes.log | grep -v "^==== sweep" | cut -c1-260 | head -40
fi
