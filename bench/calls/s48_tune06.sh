#!/usr/bin/env bash
# Session 48 (~4 minutes; carry .carry): qwen3-0.6b Q4_K_M, a 2-minute tuning job through the real coordinator and
# worker from cold caches (bench/tune_h200.sh), its chosen set then measured beside the record's hand-picked set (R06 +
# gemv_short) in one run. Last measured in session 40 (H100: 188 configurations, chosen decode 1,650 tok/s, prefill
# 83,475) before the small-model priors (gemv_short, glu_groups, pdl_first). Prediction: chosen decode >= 1,900 on the
# H100 (the hand set ~2,000), prefill ~100,000; if the chosen is > 5% behind the hand set on decode, the priors miss it.
set -u
. bench/calls/prelude.sh
nvidia-smi --query-gpu=name --format=csv,noheader
R06=$(grep "^R06=" bench/calls/s45_sets.sh | sed "s/^R06='//; s/'$//")
export HAND="${R06%\}},\"gemv_short\":true}"
TYPE=q4_k_m tune_job 06-q4km qwen3-0.6b 2m 240
sed -n '/as RESULTS.md measures/,$p' "$OUT/tune-06-q4km.txt"
