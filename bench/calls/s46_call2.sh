#!/usr/bin/env bash
# Session 46, call 2 (~4 minutes; carry .carry): where the decode step's time goes now, before choosing the session's
# decode work: the per-launch profile (bench/profile_best.sh) and one step's timeline (bench/timeline.sh: each block's
# stamps around its PDL wait) of the record's sets on qwen3-0.6b and llama-3.1-8b Q4_K_M.
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
export TYPE=q4_k_m
for P in qwen3-0.6b llama-3.1-8b; do
  K="$REC"; [ $P = qwen3-0.6b ] && K="$R06"
  timeout 200 bash bench/profile_best.sh $L /tmp/pb-$P $P "$K" 2>&1 | tee $OUT/profile-$P.txt | grep -v "^ *[a-z_]* .*prefill" | head -40
  KNOBS="$K" timeout 150 bash bench/timeline.sh $L /tmp/tl $OUT $P 2>&1 | tail -30
done
