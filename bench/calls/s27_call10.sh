#!/usr/bin/env bash
# Session 27, call 10 (~1 minute; no carry): bench/stream_bench.cu: what a block streams through an SM with the
# attention's staging (cp.async tiles in stages, each waited for and used before its stage is refilled) and nothing
# else to do, against the same bytes loaded into registers, at 1-8 blocks of 128 threads an SM. Call 4-8: the decode
# step's attention at 32k reads ~2.4-3 TB/s, and a second block an SM adds nothing.
# Prediction: if cp.async staging alone stops near 3 TB/s at 1-2 blocks an SM, the copy path is the bound (the tensor
# map's bulk copies or register staging next); if it reaches ~4+ TB/s, the tile's arithmetic and barriers are.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/sb bench/stream_bench.cu && /tmp/sb | tee $OUT/stream.txt
