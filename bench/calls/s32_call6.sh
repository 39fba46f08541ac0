#!/usr/bin/env bash
# Session 32, call 6 (~2 minutes; carry .carry/gb-smx: gemv_bench built here at this tree). The block formats' decode
# GEMVs with the activations' int8 copy staged in shared memory by each block after the wait (gemv_bench's bv_smx:
# the library's rounds, a unit's codes and scale by LDS where the library's LDG hits L1 behind the weights' misses;
# 48 registers for Q4_K rpw1 where the library's takes 60, Q6_K rpw1 54 against 74), against the library's, bitwise.
# Prediction: the few-row long shapes gain (Q4_K down 12.6 -> ~11 us, q 4.7 -> ~4.3), the pair little (19.6).
set -u
timeout 150 .carry/gb-smx "lib rpw,smx" > $OUT/gemv-smx.txt 2>&1
cut -c1-80 $OUT/gemv-smx.txt
