#!/usr/bin/env bash
# Where a block format's decode time goes: one lane a type of PRESET under the same knobs, its decode tok/s (64 tokens
# after a 5-token prompt) and its --profile by kind of launch (bench/profile_table.py), side by side.
#
# usage: [KNOBS=JSON] bench/formats_profile.sh LANE_TUNE_BINARY WORKDIR PRESET TYPE...
set -uo pipefail
LT=$1; W=$2; P=$3; shift 3
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
DEFAULT='{"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true}'
echo "${KNOBS:-$DEFAULT}" > "$W/k.json"
for T in "$@"; do
  F="$W/$P-$T.gguf"
  [ -f "$F" ] || "$LT" synth --preset "$P" --type "$T" $(case $T in *_m) ;; *) echo --pure ;; esac) --seed 1 -o "$F" -q
  D="$W/$P-$T.lane"
  "$LT" compile "$F" --knobs "$W/k.json" -o "$D" > /dev/null && "$LT" build "$D" --arch sm_90 > /dev/null || {
    echo "$P $T: build FAIL"; continue; }
  V=$(vocab "$D")
  T5=$(tokens "$V" 5 7)
  "$D/lane" "$F" "$D/lane.sidecar" 64 $T5 > "$D/time.txt" 2>&1
  echo "$P $T: decode $(awk '/DECODE_TOK_PER_S/ {print $2}' "$D/time.txt") tok/s, $(du -h "$F" | cut -f1)"
  "$D/lane" "$F" "$D/lane.sidecar" 64 $T5 --profile > "$D/prof.txt" 2>&1
  python3 "$BENCH/profile_table.py" "$D/prof.txt" "$P $T" decode "$D/lane.json"
done
