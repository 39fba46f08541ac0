#!/usr/bin/env bash
# Session 31, call 9 (~2.5 minutes, the budget's last; no carry). Call 8: the Q4_K GEMVs are not short of registers or
# resident warps. ncu --set full on gemv_bench's gate/up pair (lk_gemv_glu<lk_blk<12>, 1, 1, lk_xq>, 66 MB) and the
# plain gate GEMV (lk_gemv, 33 MB): DRAM throughput, sectors a request, L2 hit rate, the stall reasons. Prediction:
# DRAM ~75% busy over the launch, long scoreboard the top stall (the wait for the weights), the header plane's reads
# a visible share of the L1 requests (a 4-byte word a lane a unit beside 16 bytes of codes).
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb bench/gemv_bench.cu || exit 1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
for v in "gate+up:lk_gemv_glu" "gate 14336:lk_gemv"; do
  GB_SHAPE="${v%:*}" timeout 100 "$NCU" --set full --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -k "regex:${v#*:}" --launch-skip 3 --launch-count 1 --print-units base /tmp/gb "lib rpw1" > "$OUT/ncu-${v#*:}.txt" 2>&1
  echo "== ${v%:*}"
  grep -E '^  [a-z_].*\(|^    Duration |DRAM Throughput|^    Memory Throughput|Achieved Occupancy|Registers Per Thread|L2 Hit Rate |L1/TEX Hit Rate|Mem Busy|Max Bandwidth|Issue Slots Busy|issue_stalled' "$OUT/ncu-${v#*:}.txt" |
    awk '$NF+0 > 0.05 || !/issue_stalled/' | cut -c1-150 | head -30
done
