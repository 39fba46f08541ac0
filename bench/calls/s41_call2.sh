#!/usr/bin/env bash
# Prepared in session 40 (~9.5 minutes of the 10; carry .carry rebuilt at the tree): issue #14's own check on one GPU,
# meant for the H200 (say which card ran it): `lane-tune submit llama-3.1-8b.gguf --time-budget 8m` as a user runs it,
# on the Q8_0 file (the 8.5 GB checkpoint) from cold caches. Asked: >= 150 configurations, the chosen decode
# >= 305 tok/s and prefill(512) >= 6,300, GPU >= 85% over the measuring phase. Session 40's 4-minute H100 job on
# this file: 161 configurations, GPU 82.6% mean / 99% median, 308.6 / 16,110 (before the queue, stall and
# verification-margin fixes). Prediction on the H200: >= 300 configurations, GPU >= 85% mean, decode >= 390 tok/s.
# The chosen configuration's RESULTS.md-style measures after the job are cut by the timeout (the job's figures first).
set -u
. bench/calls/prelude.sh
tune_job 8b-q8 llama-3.1-8b 8m 575
