#!/usr/bin/env bash
# Session 52, call 6, prepared (~2 minutes on any GPU; carry .carry and bench/.ab_gemv52 = gemv_bench at the tree,
# `nvcc -O3 -std=c++20 -arch=sm_90 -o bench/.ab_gemv52 bench/gemv_bench.cu`, ignored by git).
# (1) Why two rows a warp gained 3.5% in the 8B's lane (session 52's call 5, the tuner's 4-warp set on an H100) while
# gemv_bench's pairs moved ~0-0.3 us: in the lane each GEMV's blocks wait under a norm or the attention (2-5 us) with
# their first loads in flight, in the bench under the quantize alone (~1 us). GB_LINK_NS puts a launch of N ns between.
# Prediction: at 2-4 us, q 4096x4096 at 2 rows a warp 1.0-1.5 us shorter than at 1 (its whole matrix in one wave's
# first loads), the gate/up pair's gap unchanged (~7 waves: the window covers one); at 0 as in call 4.
# (The lane A/B on an H200 is not needed: session 50's tuning job there screened the same set with 2 rows a warp at
# 1.924 ms a token of its workload's decode against 1.903 with 1: the H200 does not take it, the H100 does.)
set -u
. bench/calls/prelude.sh
for ns in 0 2000 4000; do
  echo "== gemv_bench GB_LINK_NS=$ns"
  [ -x bench/.ab_gemv52 ] && GB_LINK_NS=$ns timeout 90 bench/.ab_gemv52 "lib rpw1,lib rpw2,glu lib rpw1,glu lib rpw2" 2>&1 |
    grep -E "q4_k|q6_k" | grep -v "06 "
done | tee $OUT/gemv-link.txt
