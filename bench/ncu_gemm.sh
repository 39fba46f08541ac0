#!/usr/bin/env bash
# Nsight Compute on the prefill GEMMs of one preset's int8 lanes (staged, and with gemm_prequant): a 64-token prompt,
# the tensor-core kernels' speed of light, occupancy, launch shape and warp stall reasons, where the machine's runtime
# lets ncu read the counters (the clocks left alone).
#
# usage: [PROMPT=64] [KERNELS=regex] [COUNT=6] [TYPE=q4_k_m] bench/ncu_gemm.sh LANE_TUNE_BINARY WORKDIR PRESET [KNOBS_JSON...]
# (without KNOBS_JSON: the staged int8 lane and the one with gemm_prequant, chunks of 64)
set -uo pipefail
LT=$1; W=$2; P=$3; shift 3
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$LT" "$W" "$P")
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu"; exit 1; }
i=0
[ $# -gt 0 ] || set -- '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64}' \
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"gemm_prequant":true}'
for KS in "$@"; do
  echo "$KS" > "$W/n$i.json"
  "$LT" compile "$F" --knobs "$W/n$i.json" -o "$W/n$i" > /dev/null && echo "$W/n$i"
  i=$((i + 1))
done > "$W/ndirs"
build_all "$LT" "$W/ndirs"
V=$(vocab "$W/n0")
T=$(tokens "$V" "${PROMPT:-64}" 3)
while read -r D; do
  echo "==== $D $(cat "$D.json" 2> /dev/null || cat "$W/$(basename "$D").json")"
  "$NCU" --clock-control none -k regex:"${KERNELS:-lk_gemm|lk_quantize}" -c "${COUNT:-6}" --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    "$D/lane" "$F" "$D/lane.sidecar" 1 $T 2>&1 | grep -v -E '^==PROF==|^\s*$|^ +-+' | grep -E 'lk_|Duration|Throughput|Occupancy|Registers|Grid Size|Block Size|Shared Memory Config|Stall|Warp Cycles|Issue|Executed Ipc|Pipe|Waves|Bank' | head -${LINES_MAX:-150}
done < "$W/ndirs"
