#!/usr/bin/env bash
# Session 55, call 4 (~7 minutes on any GPU; carry .carry): call 3's first part without E, then call 2 with its
# 32-split pair alone, each under its own limit (refused starts left the device budget room for one call).
# Predictions as in s55_call2.sh and s55_call3.sh (removed; `git show 1cb80e3:bench/calls/s55_call3.sh`).
# Ran in session 56 (bench/NOTES.md): LK_AM_LATE_TRIGGER and LK_PDL_FIRST's bits 8 and 16 are removed since; repeat
# it from commit 1cb80e3's kernels.
set -u
. bench/calls/prelude.sh
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
echo "== pdl bits (B norms, C norms + quantize, D the step attention)"
KNOBS="$T8" NVFLAGS_B=-DLK_PDL_FIRST=4 NVFLAGS_C=-DLK_PDL_FIRST=12 NVFLAGS_D=-DLK_PDL_FIRST=16 AB_SIDES="a b c d" \
  TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 240 \
  bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee $OUT/ab-pdl.txt
echo "== depth 32k, 32 splits, B the late trigger"
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"glu_stage":true,"context":33024,"attn_splits":32}'
KNOBS="$S" NVFLAGS_B=-DLK_AM_LATE_TRIGGER=4 TYPE=q4_k_m ROUNDS=2 PREFILL=512 AB_DECODE_AT=32768 \
  AB_PROMPT_LENS="5 20000" timeout 180 bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 |
  grep -E "====|BUILD_FAIL" | tee $OUT/ab-depth.txt
