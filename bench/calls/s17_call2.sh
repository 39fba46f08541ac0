#!/usr/bin/env bash
# For the next GPU session, call 2 (~2 minutes; no carry needed): bench/persistent_bench.cu, the persistent decode's
# question before it is built (#16, #18): a step's GEMVs (8B and 0.6B shapes, Q4_K) launched one by one in a graph
# under pdl, against one cooperative kernel walking them with grid barriers (with and without an L2 prefetch of each
# warp's next row before the barrier), and the barriers alone.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/pb bench/persistent_bench.cu && timeout 200 /tmp/pb | tee $OUT/persistent.txt
