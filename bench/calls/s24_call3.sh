#!/usr/bin/env bash
# Session 24, call 3 (~3 minutes; bench/tmpbin/gemm_bench, sm_90a): why lk_gemm_w (call 2: correct, but 2x slower than
# lk_gemm_h, its time independent of BN: ~2 us a stage) waits. ncu --set full with the stall reasons on the gate/up GEMM
# (Q4_K, 512 rows) for wgmma bn128 and half bm128 bn128; the wgmma kernel's SASS order of loads, barriers and HGMMA.
# Prediction: long scoreboard (the weights' loads issued one stage ahead, DRAM latency a stage) dominates both.
set -u
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
for V in "wgmma bn128 s1" "half bm128 bn128 s1*"; do
  GB_SHAPE="gate+up 2x14336x4096 q4_k" GB_ROWS=512 GB_VARIANT="$V" timeout 200 $NCU --set full \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' -k regex:lk_gemm_ --launch-skip 2 \
    --launch-count 1 --print-units base bench/tmpbin/gemm_bench > "$OUT/ncu-${V%% *}.txt" 2>&1
  echo "== $V"
  grep -E '^    Duration |DRAM Throughput|^    Memory Throughput|Achieved Occupancy|Registers Per Thread|L2 Hit Rate |L1/TEX Hit|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc A|Waves Per SM|Block Limit|Shared Memory Throughput|Bank Confl|stalled_.*ratio +[0-9.]+' "$OUT/ncu-${V%% *}.txt" |
    awk '{ if ($0 ~ /stalled/) { if ($NF + 0 >= 0.3) print } else print }' | cut -c1-160
done
cuobjdump -sass -fun '_Z9lk_gemm_wI6lk_blkILi12EELb1ELi128ELi1EEvT_S2_PK6__halfPKfPfiiiS8_Pi' bench/tmpbin/gemm_bench > $OUT/sass-gemm-w.txt
grep -nE 'LDG|HGMMA|BAR|WARPGROUP|LDSM|LDGSTS|DEPBAR|WARPSYNC|BRA' $OUT/sass-gemm-w.txt | cut -c1-120 | head -120
