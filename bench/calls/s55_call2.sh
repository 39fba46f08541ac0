#!/usr/bin/env bash
# Session 55, call 2 (~5 minutes on any GPU; carry .carry): #19's decode at depth 32k with the step attention's late
# trigger (kernels/shapes.cuh's LK_AM_LATE_TRIGGER, a measurement switch: a block of more than 4 tiles lets the o
# projection's launch start after its tiles, not after its wait). Session 31's timeline: at 32k the attention is 45.5
# us a layer, its blocks' tiles done at 30.4 us mean and 39.7 the latest, and in the lane a block streams slower than
# alone (16 splits: 22 against 27 GB/s a block), the o projection's blocks beside it from its first release with their
# first weights asked. llama-3.1-8b Q4_K_M, lanes of 33,024 positions, decode of 128 after a 32,768-token prompt,
# one build: A 32 splits (the depth record's count), B A + the late trigger, C 16 splits, D C + the late trigger.
# Prediction: B/A +2-4% (the stream alone, the o projection's first weights under the fold), D/C +4-8% (one block an
# SM: the o projection's blocks took the other half); logits bitwise equal (the trigger moves no value).
set -u
. bench/calls/prelude.sh
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"glu_stage":true,"context":33024,'
KNOBS="${S}\"attn_splits\":32}" KNOBS_C="${S}\"attn_splits\":16}" KNOBS_D="${S}\"attn_splits\":16}" \
  NVFLAGS_B=-DLK_AM_LATE_TRIGGER=4 NVFLAGS_D=-DLK_AM_LATE_TRIGGER=4 AB_SIDES="a b c d" TYPE=q4_k_m ROUNDS=2 \
  PREFILL=512 AB_DECODE_AT=32768 AB_PROMPT_LENS="5 20000" timeout 540 \
  bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee $OUT/ab.txt
