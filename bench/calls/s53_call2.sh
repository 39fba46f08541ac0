#!/usr/bin/env bash
# Session 53, call 2 (~5 minutes on any GPU; carry .carry, bench/.ab_pbench53 = persistent_bench at the tree, and
# bench/.ab_gemv52 for s52_call6.sh).
# (1) persistent_bench's staged form (new): a decode step's GEMVs (Q4_K) in one persistent kernel of one block an SM,
# each warp's rows streamed into shared memory by the bulk copy engine NS chunks ahead of its sums, across the GEMVs
# and the grid barriers between them, each GEMV's int8 copy staged by the block after its barrier. Prediction (H200;
# the H100 ~1.45x the times, its bound ~1,230 us at 3.15 TB/s): launched (graph, pdl) ~1,500-1,700 us a step for the
# 8B's 3.9 GB; staged with the barriers 1,000-1,200 (3.3-3.9 TB/s); without them 950-1,100; outputs equal bit for bit. If the staged form is not under ~0.8 of the launched one, the persistent decode with
# staged weights does not pay either (its sums' instructions, 8-12 warps an SM, are the limit), and session 52's plan
# for #18's 0.6B goal is wrong; if it is, the lane's decode is to be built that way.
# (2) s52_call6.sh (its prediction in its header).
set -u
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
[ -x bench/.ab_pbench53 ] && timeout 200 bench/.ab_pbench53 2>&1 | tee $OUT/pbench.txt
bash bench/calls/s52_call6.sh
