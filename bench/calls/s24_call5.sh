#!/usr/bin/env bash
# Session 24, call 5 (~2 minutes; bench/tmpbin/gemm_bench, sm_90a): lk_gemm_w with two warpgroups a block and 128 of k a
# stage (half the stages' chains, as BM 64 did for lk_gemm_h in session 14), every shape at 256 and 512 rows.
# Prediction: q/down at 256 rows 1.3-1.5x lk_gemm_h (call 4's k64: 0.7-1.06x), gate/up 1.1-1.3x.
set -u
timeout 300 bench/tmpbin/gemm_bench 2>&1 | tee $OUT/gemm.txt | grep -E "shape|s[0-9]\*|wgmma"
