#!/usr/bin/env bash
# Prepared in session 36 (~2 minutes; no carry needed): bench/norm_fold_bench.cu, the decode norm folded into the
# GEMV before it (bench/NOTES.md, session 36's design), at the 8B's shapes (d 4,096, a gate-sized consumer of 14,336
# rows) and the 0.6B's (1,024, 3,072). Prediction: the checks pass (the residual bit for bit, a few codes one apart,
# the consumer within ~1e-3), and B saves most of what the norm launch costs in the chain ("A w/o norm"): on the 8B
# ~2.5-3.5 us a pair of the add_norm's ~3.9. If it does, the knob is worth building (schedule, lowering, the CPU plan
# model); if B saves under 1 us, the norm's cost is the GEMV's tail and the fold is not the way. Session 37 added C
# (norm_fold_groups' blocks of a 32-group: no counter or fence), checked equal to B bit for bit; prediction: C saves
# ~0.5-1 us a pair more than B on the 8B's shape.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/nfb bench/norm_fold_bench.cu || exit 1
for shape in "4096 14336" "1024 3072"; do /tmp/nfb $shape; done 2>&1 | tee $OUT/norm_fold.txt
