#!/usr/bin/env bash
# Prepared in session 40 (~6 minutes; carry .carry rebuilt at the tree): llama-3.1-8b Q4_K_M, the 4-minute job of
# session 40's call 3 (188 configurations, 21 verified, GPU 66% mean; its call 4, 3 minutes with the queue and stall
# fixes: 117, 22, 74%) with the model search's verification margin (kWithin: a front member verified only within 0.5%
# of the best known) and the CPU reference's prompts generated together with the wide dot (its verdict ~100 s before).
# Prediction: >= 220 configurations, <= 14 verifications, GPU >= 80% mean, the first verified result before 45 s.
set -u
. bench/calls/prelude.sh
TYPE=q4_k_m tune_job 8b-q4km llama-3.1-8b 4m 330
grep -h "reference_checked\|resident_host_up" /tmp/tj-8b-q4km/job/worker-0.log | head -3
