#!/usr/bin/env bash
# Session 49, call 1 (~7 minutes; carry .carry, .carry-old, bench/.ab_k64_s3, bench/.ab_skip, bench/.ab_gemv): session
# 48's call 8 (the rescale skip bitwise, the fold rule A/B and verified), then the 0.6B's short rows alone
# (bench/gemv_bench.cu's out06 / gate06 shapes: k 1,024, one unit a lane). Why: the 0.6B's logits (151,936 Q6_K rows of
# k 1,024, 127 MB) run at 1.9 TB/s in its step (68.5 us of 530 on the H100) where the 8B's (k 4,096) reach 3.2: a warp
# there takes one round and exits. Prediction: the lane's form (lib short rpw8) ~60% of the read rate; warps that walk
# the rows in one wave with the next group's loads in flight (stream rpw4/8 ah1) 1.3-1.5x it.
set -u
bash bench/calls/s48_call8.sh
echo "== gemv_bench, k 1,024"
[ -x bench/.ab_gemv ] && GB_SHAPE=06 timeout 120 bench/.ab_gemv lib,stream 2>&1 | tee $OUT/gemv06.txt
