#!/usr/bin/env bash
# Nsight Compute's full sections for chosen launches of a lane (#16, #18, #19): the lane compiled from KNOBS (and a
# CONTEXT when given), run on one prompt of DEPTH tokens (default 5) with 2 generated, and the launches whose demangled
# name matches REGEX (after SKIP of them, COUNT in all) profiled with `--set full`. Prints, a launch a block, the
# figures that say what bounds a kernel: duration, DRAM and memory throughput, achieved occupancy, registers, the
# warps' stall reasons (each reason's warps an issued instruction: smsp__average_warps_issue_stalled_*). The whole
# report text is kept as WORKDIR/PRESET.ncuk.txt.
# (The report prints lk_attention_mma<128, 128, 1, 7>, but that regex matched nothing in session 26: the filter seems
# to see the typed form its source page shows, lk_attention_mma<(int)128, (int)128, (bool)1, (int)7>. Match a name
# prefix and choose the launches with SKIP and COUNT.)
# (Session 22: 'lk_gemv_glu<lk_blk<12>, 1, 1|lk_gemv<lk_blk<1[24]>, [12], 1, lk_xq>' matched nothing; a plain name
# prefix such as lk_gemv, with SKIP and COUNT choosing the launches, is what worked.)
#
# NCU_CACHE=none keeps the caches between the profiled launches (ncu flushes them by default: a kernel's code and the
# activations then come from DRAM, which a decode step's small kernels do not see as often).
#
# usage: [TYPE=q4_k_m] [KNOBS='{..}'] [CONTEXT=N] [DEPTH=N] [SKIP=0] [NCU_CACHE=all] bench/ncu_kernels.sh LANE_TUNE WORKDIR PRESET REGEX COUNT
set -uo pipefail
LT=$1; W=$2; P=$3; RE=$4; N=$5
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$LT" "$W" "$P")
K=${KNOBS:-{\}}
[ -n "${CONTEXT:-}" ] && K="${K%\}}$([ "$K" = "{}" ] || echo ,)\"context\":$CONTEXT}"
echo "$K" > "$W/$P.ncuk.json"
D=$W/$P.ncuk
"$LT" compile "$F" --knobs "$W/$P.ncuk.json" -o "$D" > /dev/null && "$LT" build "$D" --arch sm_90 > "$D.build.log" 2>&1 ||
  { echo "BUILD FAIL $(grep -m3 error "$D.build.log")"; exit 1; }
printf '2 %s\n' "$(tokens "$(vocab "$D")" "${DEPTH:-5}" 5)" > "$W/$P.ncuk.prompt"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu"; exit 1; }
"$NCU" --set full --cache-control "${NCU_CACHE:-all}" --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
  --kernel-name-base demangled -k "regex:$RE" --launch-skip "${SKIP:-0}" --launch-count "$N" \
  --print-units base "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.ncuk.prompt" > "$W/$P.ncuk.txt" 2> "$W/$P.ncuk.err"
echo "ncu rc=$? ($(grep -c '^  [a-z_].*(' "$W/$P.ncuk.txt") launches)"
grep -E '^  [a-z_].*\(|^    Duration |DRAM Throughput|^    Memory Throughput|Achieved Occupancy|Registers Per Thread|Theoretical Occupancy|Block Limit (Registers|Shared Mem)|Compute \(SM\) Throughput|L2 Hit Rate |Waves Per SM|Grid Size|Block Size|Dynamic Shared|Shared Memory Configuration Size|Driver Shared|stall|Stall' "$W/$P.ncuk.txt" |
  cut -c1-200 | head -${NCU_LINES:-200}
