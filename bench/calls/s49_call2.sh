#!/usr/bin/env bash
# Session 49, call 2 (~8 minutes; carry .carry, .carry-old, bench/.ab_gemv). (1) Every decode GEMV shape and variant of
# bench/gemv_bench.cu on this GPU: what the 8B's matrices reach alone (session 46's profile on the H100: gate/up 0.82 of
# the read rate, o and down ~0.75). (2) The two attention changes in lanes at depth: A 0a959d7's build, B the tree's
# (the rescale skip, bitwise equal on one split; the fold rule, which moves a 16-split set's numbers): the 0.6B's record
# after 512 tokens, the 8B's after 5 and 512. Prediction: B/A 1.00-1.02 at 512 (the skip: 1-2% of the attention
# bench's time at depth 512), ~1.00 on the 8B after 5 tokens (its 16 splits fold spans of 5: one split either way).
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
echo "== gemv_bench"
[ -x bench/.ab_gemv ] && timeout 200 bench/.ab_gemv 2>&1 | tee $OUT/gemv.txt
ab_records qwen3-0.6b:512 llama-3.1-8b:5 llama-3.1-8b:512
