#!/usr/bin/env bash
# Session 32, call 1 (carry .carry: this tree's build): session 31's prepared LK_XQ_SUMS measurement
# (bench/calls/s31_next_xq_sums.sh: gemv_bench without and with the switch, then the lane's decode A/B with logits
# compared), plus the SASS of gemv_bench's kernels both ways (cuobjdump there; this machine has no SASS tools) to count
# the Q4_K GEMVs' instructions a unit.
set -u
export PATH=/usr/local/cuda/bin:$PATH
for v in 0 1; do nvcc -O3 -std=c++20 -arch=sm_90 -DLK_XQ_SUMS=$v -o /tmp/gb$v bench/gemv_bench.cu & done
wait
for v in 0 1; do cuobjdump -sass /tmp/gb$v | xz -T4 > $OUT/sass-gb$v.txt.xz; done
bash bench/calls/s31_next_xq_sums.sh
