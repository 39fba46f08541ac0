#!/usr/bin/env bash
# Three checks of a lane's contract on a GPU machine, for one preset:
#  - --device-bytes below the weights' size (the largest matrices in mapped host memory): the logits bit for bit those
#    of the lane with every matrix on the device, and the decode speed of both;
#  - --profile against the step with graphs on and off (bench/profile_check.sh);
#  - the GEMV's loads in flight: the same lane built with LK_GEMV_AHEAD 1 and 4 (the default), decode timed.
# Prints one line a check.
#
# usage: bench/lane_checks.sh LANE_TUNE_BINARY WORKDIR PRESET DEVICE_BYTES
set -uo pipefail
LT=$1; W=$2; P=$3; BYTES=$4
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$LT" "$W" "$P")
D="$W/$P.default"
echo '{"pdl":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true}' > "$W/k.json"
"$LT" compile "$F" --knobs "$W/k.json" -o "$D" > /dev/null && "$LT" build "$D" --arch sm_90 > /dev/null || { echo "$P build FAIL"; exit 1; }
V=$(vocab "$D")
prompts "$V" "$W/$P.prompts"
"$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$W/dev.bin" > "$W/dev.txt" 2>&1
"$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$P.prompts" --logits "$W/host.bin" --device-bytes "$BYTES" > "$W/host.txt" 2>&1
rc=$?
same=DIFFER; cmp -s "$W/dev.bin" "$W/host.bin" && [ -s "$W/dev.bin" ] && same=bit-equal
T=$(tokens "$V" 64 5)
"$D/lane" "$F" "$D/lane.sidecar" 64 $T > "$W/dev.time" 2>&1
"$D/lane" "$F" "$D/lane.sidecar" 64 $T --device-bytes "$BYTES" > "$W/host.time" 2>&1
echo "$P device-bytes=$BYTES rc=$rc $(grep -h -E '^(DEVICE_BYTES|HOST_BYTES|MOVED):' "$W/host.txt" | tr '\n' ' ')logits=$same" \
  "decode_tok_s device=$(awk '/DECODE_TOK_PER_S/ {print $2}' "$W/dev.time") host=$(awk '/DECODE_TOK_PER_S/ {print $2}' "$W/host.time")"
[ $rc -eq 0 ] || head -5 "$W/host.txt"

bash "$BENCH/profile_check.sh" "$LT" "$W" "$P"

for ahead in 1 4; do
  A="$W/$P.ahead$ahead"
  rm -rf "$A"; cp -r "$D" "$A"; rm -f "$A/lane"
  sed -i "1i #define LK_GEMV_AHEAD $ahead" "$A/lane.cu"
  "$LT" build "$A" --arch sm_90 > /dev/null || { echo "ahead $ahead build FAIL"; continue; }
  "$A/lane" "$F" "$A/lane.sidecar" --prompts "$W/$P.prompts" --logits "$A/out.bin" > /dev/null 2>&1
  s=DIFFER; cmp -s "$A/out.bin" "$W/dev.bin" && s=bit-equal
  best=0
  for rep in 1 2 3; do
    "$A/lane" "$F" "$A/lane.sidecar" 128 $T > "$A/time.txt" 2>&1
    t=$(awk '/DECODE_TOK_PER_S/ {print $2}' "$A/time.txt")
    best=$(python3 -c "print(max($best, ${t:-0}))")
  done
  echo "$P gemv_ahead=$ahead decode_tok_s(best of 3)=$best logits=$s"
done
