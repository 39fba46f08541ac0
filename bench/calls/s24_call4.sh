#!/usr/bin/env bash
# Session 24, call 4 (~3 minutes; bench/tmpbin/gemm_bench, sm_90a): lk_gemm_w after call 3's ncu (L2 67% busy: the
# activations read through half-used sectors, 8 rows a quarter warp, and by blocks of only 32 gate/up outputs; shared
# memory 67% excess wavefronts): the activations in wgmma's 128-byte swizzle, 8 threads a row; one or two warpgroups a
# block (2: 64 or 32 x 2 outputs a block, the activations' traffic halved). Prediction: gate/up (512 rows) from 1,080
# us to 350-450 (lk_gemm_h 512); q/down ahead of lk_gemm_h by 1.2-1.5x.
set -u
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
GB_SHAPE=4096x timeout 200 bench/tmpbin/gemm_bench 2>&1 | tee $OUT/gemm.txt | grep -E "shape|s1\*|s2\*|s4\*|wgmma"
V="wgmma2 bn128 s1"
GB_SHAPE="gate+up 2x14336x4096 q4_k" GB_ROWS=512 GB_VARIANT="$V" timeout 200 $NCU --set full \
  --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' -k regex:lk_gemm_ --launch-skip 2 \
  --launch-count 1 --print-units base bench/tmpbin/gemm_bench > "$OUT/ncu-wgmma2.txt" 2>&1
grep -E '^    Duration |DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Issue Slots Busy|Achieved Occupancy|excessive|bank conflict|stalled_(long|short|gmma|barrier|math|mio).*ratio' "$OUT/ncu-wgmma2.txt" | cut -c1-150
