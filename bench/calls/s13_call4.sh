#!/usr/bin/env bash
# Session 13, call 4: ncu on gemm_half's kernel (q 4096x4096 q4_k, 512 rows, bn64) and on the int8 tiled one.
cd "$(dirname "$0")/../.."
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
nvcc -O3 -std=c++20 -arch=sm_90 -lineinfo -o /tmp/gemm_bench bench/gemm_bench.cu || exit 1
cuobjdump -sass /tmp/gemm_bench | awk '/Function : .*lk_gemm_hI6lk_blkILi12EELb0ELi64E/{p=1} p&&/Function : /&&!/lk_gemm_hI6lk_blkILi12EELb0ELi64E/{p=0} p' > $OUT/sass-q4k-bn64.txt
grep -c "HMMA" $OUT/sass-q4k-bn64.txt; grep -oE "^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+" $OUT/sass-q4k-bn64.txt | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25
for v in "half bn64" "int8 tiled bn64"; do
  GB_SHAPE="q    4096x4096 q4_k" GB_ROWS=512 GB_VARIANT="$v" timeout 200 $NCU --kernel-name regex:"lk_gemm_(h|i8tb)" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis \
    /tmp/gemm_bench > $OUT/ncu-"${v// /_}".txt 2>&1
  grep -E "Duration|Throughput|Issue Slots|Stall|Warp Cycles|Eligible|Active Warps|Achieved Occ|Executed Ipc|Pipe|L1/TEX Hit|L2 Hit|Registers|Block Limit" $OUT/ncu-"${v// /_}".txt | head -60
done
