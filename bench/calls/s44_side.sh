#!/usr/bin/env bash
# Session 44 (~9 minutes; carry .carry): the H200 was not lent (an H100 came), so the H100's side-by-side picture
# of the current code: llama.cpp's llama-bench built here (bench/llama_build.sh, in the background), bench/speed.sh on
# llama-3.1-8b Q4_K_M with the record's set (session 35, H200) and the set session 44's tuning job chose on this kind
# (call 1: 458 tok/s), then llama-bench on the same file in the same run. PRESETS= (default the 8B) and SETS_FILE=
# (one JSON set a line) override. Prediction: decode ~455-460 tok/s, 0.68-0.72 of the H100's read bound, ~1.9x
# llama.cpp; prefill(512) ~16,800, ~1.6x.
set -u
. bench/calls/prelude.sh
[ -x /tmp/llama-bench ] || (bash bench/llama_build.sh .llama/src.tar.xz /tmp/lb /tmp/llama-bench > $OUT/llama_build.txt 2>&1) &
LBP=$!
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
C='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_qkv_mixed":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"pdl_first":true,"gemv_rows_per_warp":2,"gemv_rows_q6_k":2,"gemv_split":2,"gemv_warps":4,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":16}'
SETS=$(printf '%s\n%s' "$R" "$C"); [ -n "${SETS_FILE:-}" ] && SETS=$(cat "$SETS_FILE")
for P in ${PRESETS:-llama-3.1-8b}; do
  TYPE=q4_k_m KNOB_SETS="$SETS" timeout ${SPEED_TIMEOUT:-400} bash bench/speed.sh $L /tmp/s "" -- $P > $OUT/speed-$P.txt 2>&1
  echo "speed $P rc=$?"; grep -E "tok/s|bound|rate|^  " $OUT/speed-$P.txt | cut -c1-220 | head -30
done
wait $LBP; tail -3 $OUT/llama_build.txt 2> /dev/null
for F in /tmp/s/*q4_k_m.gguf; do
  /tmp/llama-bench -m "$F" -p 512 -n 128 -fa 1 -ngl 99 -r 3 -o md 2>&1 | grep -E '^\|' | tee -a $OUT/llama.txt
done
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
