#!/usr/bin/env bash
# Session 25, call 1 (~6 minutes; carry .llama/src.tar.xz): the f16 GEMMs' Q4_K unpacking straight to f16 pairs
# (kernels/gemm_half.cuh lk_q4k_half, switch LK_GH_DIRECT_Q4K, off in the lanes until this says): bench/gemm_bench.cu
# built twice on the GPU machine (0: the f32 path rounded; 1: the direct path), the Q4_K shapes at 256 and 512 rows,
# lk_gemm_h and lk_gemm_w. Prediction: gate/up (512 rows) 494 -> 380-420 us on lk_gemm_w, lk_gemm_h's 256-row GEMMs
# 1.1-1.3x; relative L2 against f64 from 3.7e-4 to <= 6e-4 (d sc and dmin m rounded to f16 first). If so: the switch
# on by default, the trained checkpoints' --verify, then the 8B's prefill A/B in the lane.
# Beside it (this checkout lost its carried llama-bench): llama.cpp's llama-bench built here (bench/llama_build.sh),
# sent back xz'd in pieces of 15 MiB (cat them into .llama/llama-bench.xz).
set -u
export PATH=/usr/local/cuda/bin:$PATH
( nice -n 5 bash bench/llama_build.sh .llama/src.tar.xz /tmp/ll /tmp/llama-bench > /tmp/llbuild.log 2>&1 && \
  xz -T8 -6 -c /tmp/llama-bench > /tmp/llama-bench.xz && split -b 15M -d /tmp/llama-bench.xz $OUT/llama-bench.xz.part ) &
llpid=$!
nv=()
for v in 0 1; do
  nvcc -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a -DLK_GH_DIRECT_Q4K=$v -o /tmp/gb$v bench/gemm_bench.cu &
  nv+=($!)
done
wait "${nv[@]}"
for v in 0 1; do
  echo "== LK_GH_DIRECT_Q4K=$v"
  GB_SHAPE=q4_k timeout 150 /tmp/gb$v 2>&1 | tee $OUT/gemm-direct$v.txt | grep -E "shape|half bm[0-9]+ bn128 s1\*|wgmma2 bn128 k128"
done
wait $llpid; echo "llama build rc=$?"; tail -3 /tmp/llbuild.log; ls -la $OUT
/tmp/llama-bench --help 2>&1 | head -3
