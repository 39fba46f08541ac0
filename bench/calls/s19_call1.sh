#!/usr/bin/env bash
# Session 19, call 1 (~9 minutes; carry .carry): #17's last unjudged shape, gpt-oss-20b's first 2 layers (32 experts
# of 2880 x 2880, vocab 201,088) trained on local text, written as MXFP4 experts, and judged under every numerics
# (precise, dequant, dequant + gemm_half, int8, int8x2, the side-by-side set) on prompts of 40 and 600 tokens. The
# training script prints each stage's time (session 16's run ran past its call after training).
set -u
. bench/calls/prelude.sh
. bench/calls/moe_side_by_side.sh
JUDGE_SETS='{"numerics":"precise"}
{"numerics":"dequant"}
{"numerics":"dequant","gemm_half":true,"max_chunk":512}
{"numerics":"int8","fuse_qkv":true,"max_chunk":64}
{"numerics":"int8x2","gemv_prequant":true,"max_chunk":64}'"
$MOE_512" PROMPT_LENS="40 600" OSS_SECONDS=40 TRAIN_TIMEOUT=330 JUDGE_TIMEOUT=200 ONLY=oss20-2l \
  bash bench/calls/s15_trained_moe.sh
ls -la /tmp/t | head; tail -3 $OUT/judge-oss20-2l-mxfp4.err 2>/dev/null
