#!/usr/bin/env bash
# One decode step's timeline of a lane (#16, #18): the checkpoint (TYPE, default q4_k_m) compiled with KNOBS, built with
# -DLK_TIMELINE=1 (kernels/prelude.cuh: each block's stamps around its first PDL wait, and LK_TL_MARK's marks inside a
# kernel), run on a prompt of TL_PROMPT tokens (default 5; the knobs' context must hold it) then 128 tokens, the
# middle step recorded; bench/timeline.py's table kept as OUTDIR/timeline-PRESET.txt (the records as
# OUTDIR/tl-PRESET.txt), its summary printed.
#
# usage: [TYPE=q4_k_m] [TL_PROMPT=5] KNOBS='{..}' bench/timeline.sh LANE_TUNE WORKDIR OUTDIR PRESET
set -uo pipefail
LT=$1; W=$2; O=$3; P=$4
. "$(dirname "$0")/common.sh"
mkdir -p "$W" "$O"
NVCC=${LT_NVCC:-/usr/local/cuda/bin/nvcc}
printf '#!/bin/sh\nexec "%s" -DLK_TIMELINE=1 "$@"\n' "$NVCC" > "$W/tl-nvcc" && chmod +x "$W/tl-nvcc"
F=$(TYPE=${TYPE:-q4_k_m} checkpoint "$LT" "$W" "$P")
echo "${KNOBS:-{\}}" > "$W/$P.tl.json"
"$LT" compile "$F" --knobs "$W/$P.tl.json" -o "$W/$P.tl" > /dev/null
LT_NVCC=$W/tl-nvcc "$LT" build "$W/$P.tl" --arch sm_90 > "$W/$P.tl.log" 2>&1 ||
  { echo "BUILD_FAIL $P"; tail -5 "$W/$P.tl.log"; exit 1; }
T=$(tokens "$(vocab "$W/$P.tl")" "${TL_PROMPT:-5}" 7)
LK_TIMELINE_FILE=$O/tl-$P.txt "$W/$P.tl/lane" "$F" "$W/$P.tl/lane.sidecar" 128 $T 2>&1 | grep -E "DECODE_TOK|rror" | head -3
python3 "$(dirname "$0")/timeline.py" "$O/tl-$P.txt" "$W/$P.tl" > "$O/timeline-$P.txt" 2>&1
head -1 "$O/timeline-$P.txt"
sed -n '/^step/,$p' "$O/timeline-$P.txt" | head -24
