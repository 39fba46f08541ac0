#!/usr/bin/env bash
# gemv_prequant A/B on one preset: int8 lanes (fusions, pdl, chunks of 256 under gemm_prequant) with and without the
# decode step's activations quantized once. The two must give the same logits bit for bit on the check prompts (the
# same int8 words, scales and sums); then decode tok/s (128 tokens after a 5-token prompt), the median of 3 processes.
#
# usage: bench/prequant_check.sh LANE_TUNE_BINARY WORKDIR PRESET
set -uo pipefail
LT=$1; W=$2; P=$3
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
F=$(checkpoint "$LT" "$W" "$P")
base='{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256,"pdl":true,"gemm_prequant":true'
for g in false true; do
  echo "$base,\"gemv_prequant\":$g}" > "$W/gq$g.json"
  "$LT" compile "$F" --knobs "$W/gq$g.json" -o "$W/gq$g" > /dev/null && echo "$W/gq$g"
done > "$W/gq.dirs"
build_all "$LT" "$W/gq.dirs"
V=$(vocab "$W/gqfalse")
prompts "$V" "$W/gq.prompts" 8
T=$(tokens "$V" 5 7)
for g in false true; do
  D="$W/gq$g"
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/gq.prompts" --logits "$D/out.bin" > /dev/null 2>&1 || echo "$P gemv_prequant=$g RUN FAIL"
  dec=()
  for r in 1 2 3; do dec+=("$("$D/lane" "$F" "$D/lane.sidecar" 128 $T | awk '/DECODE_TOK_PER_S/ {print $2}')"); done
  echo "$P gemv_prequant=$g decode_tok_s=$(python3 -c 'import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))' "${dec[@]}") (${dec[*]})"
done
cmp -s "$W/gqfalse/out.bin" "$W/gqtrue/out.bin" && [ -s "$W/gqtrue/out.bin" ] && echo "$P gemv_prequant logits: bit-equal" || echo "$P gemv_prequant logits: DIFFER"
