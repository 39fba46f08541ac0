#!/usr/bin/env bash
# The block formats read in place (issue #16) on a GPU machine:
#  1. every format on a tiny model through `lane-tune measure --verify` (the resident host, as a worker measures: the
#     logits against the CPU reference within the numerics' bound, the tokens, --stagger bit for bit), under knob sets
#     that cover the numerics and the fused launches;
#  2. the release's program (lane.cu: its own uploads) for some of them, its logits against the reference's;
#  3. speed on SPEED_PRESETS in q4_k_m (llama.cpp's mix): decode and prefill(512) of a few knob sets (dequant, int8,
#     int8x2), each screened against the reference first.
# Prints a line a configuration, then a table. (Set 10 names gemv_rows_q6_k: for checkpoints with Q6_K matrices.)
#
# usage: [SPEED_PRESETS="qwen3-0.6b llama-3.1-8b"] [SPEED_ONLY=1] [SETS_ONLY="4 5"] [SPEED_SETS="3 6"] [TYPES="iq4_nl"] [LANE_TYPES=..] bench/formats_check.sh LT WORKDIR
set -uo pipefail
LT=$1; W=$2
. "$(dirname "$0")/common.sh"
mkdir -p "$W"
SETS=(
  '{"numerics":"dequant"}'
  '{"numerics":"precise","max_chunk":16,"fuse_norm":true}'
  '{"numerics":"dequant","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"fuse_rope":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"dequant","fuse_qkv":true,"max_chunk":64,"gemv_split":2,"side_streams":true,"cuda_graphs":false}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"gemv_rows_per_warp":2}'
  '{"numerics":"int8x2","max_chunk":16,"gemv_split":2,"fuse_norm":false}'
  '{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_norm":true,"max_chunk":16,"gemv_rows_per_warp":2}'
  '{"numerics":"int8","gemm_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64}'
  '{"numerics":"int8x2","gemm_prequant":true,"gemm_tile":64,"fuse_glu":true,"max_chunk":256,"gemv_prequant":true}'
  '{"numerics":"int8","gemm_prequant":true,"gemm_tile":128,"fuse_glu":true,"fuse_qkv":true,"max_chunk":64}'
  '{"numerics":"int8","gemv_prequant":true,"gemv_split":2,"gemv_rows_q6_k":2,"fuse_glu":true,"max_chunk":16}'
)
args=()
for i in ${SETS_ONLY:-${!SETS[@]}}; do args+=(--knobs-json "${SETS[$i]}"); done
TABLE="$W/formats.txt"
: > "$TABLE"
[ -n "${SPEED_ONLY:-}" ] || for T in ${TYPES:-q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k mxfp4 iq4_nl iq4_xs q4_k_m q5_k_m}; do
  P=tiny-qwen3
  case $T in *_m) P=tiny-llama ;; esac
  F="$W/$P-$T.gguf"
  [ -f "$F" ] || "$LT" synth --preset "$P" --type "$T" $(case $T in *_m) ;; *) echo --pure ;; esac) --seed 3 -o "$F" -q
  "$LT" measure "$F" "${args[@]}" --verify --workload 64,16 --repeat 1 --cache "$W/cache" > "$W/$T.measure" 2> "$W/$T.err"
  echo "$T $P: $(grep -cE '^ +[0-9]+ +verified ' "$W/$T.measure") of $((${#args[@]} / 2)) verified" | tee -a "$TABLE"
  grep -E '^ +[0-9]+ +(failed|screened) ' "$W/$T.measure" | cut -c1-240 | head -4
  [ -s "$W/$T.measure" ] || tail -3 "$W/$T.err"
done

# The release's program: compiled, built, its logits against the reference's.
[ -n "${SPEED_ONLY:-}" ] || for T in ${LANE_TYPES:-q4_k_m q5_1 mxfp4 iq4_xs q2_k q3_k}; do
  P=tiny-qwen3; case $T in *_m) P=tiny-llama ;; esac
  F="$W/$P-$T.gguf"
  D="$W/lane-$T"
  echo "${SETS[2]}" > "$W/k.json"
  "$LT" compile "$F" --knobs "$W/k.json" -o "$D" > /dev/null && "$LT" build "$D" --arch sm_90 > /dev/null || {
    echo "lane.cu $T: build FAIL" | tee -a "$TABLE"; continue; }
  V=$(vocab "$D")
  PROMPT_LENS="5 80" prompts "$V" "$W/$T.prompts" 8
  reference_prompts "$LT" "$F" "$W/$T.prompts" "$W/$T.ref"
  "$D/lane" "$F" "$D/lane.sidecar" --prompts "$W/$T.prompts" --logits "$W/$T.out.bin" > "$W/$T.out.txt" 2>&1
  echo "lane.cu $T: $(python3 "$BENCH/compare_logits.py" "$W/$T.ref.bin" "$W/$T.out.bin" "$V" --tol 1e-5 \
    --ref-tokens "$W/$T.ref.txt" --out-tokens "$W/$T.out.txt")" | tee -a "$TABLE"
done

# Speed in llama.cpp's Q4_K_M mix.
SPEED=(
  '{"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_rows_per_warp":2}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":4,"gemv_warps":4}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"fuse_rope":true,"fuse_norm":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":64,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2,"gemm_prequant":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2,"gemm_prequant":true}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2,"gemm_prequant":true,"gemm_tile":64}'
  '{"numerics":"int8","fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"max_chunk":256,"pdl":true,"gemv_prequant":true,"gemv_rows_per_warp":2,"gemm_prequant":true,"gemm_tile":128}'
)
sargs=()
for i in ${SPEED_SETS:-${!SPEED[@]}}; do sargs+=(--knobs-json "${SPEED[$i]}"); done
for P in ${SPEED_PRESETS-qwen3-0.6b llama-3.1-8b}; do
  F="$W/$P-q4_k_m.gguf"
  t0=$(date +%s.%N)
  [ -f "$F" ] || "$LT" synth --preset "$P" --type q4_k_m --seed 1 -o "$F" -q
  echo "$P q4_k_m: synth $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s, $(du -h "$F" | cut -f1)"
  "$LT" measure "$F" "${sargs[@]}" --workload 512,128 --repeat 3 --cache "$W/cache" > "$W/$P.speed" 2> "$W/$P.speed.err"
  sed "s/^/$P q4_k_m /" "$W/$P.speed" | tee -a "$TABLE"
  [ -s "$W/$P.speed" ] || tail -3 "$W/$P.speed.err"
done
echo "---- table"
cat "$TABLE"
