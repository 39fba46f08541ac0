#!/usr/bin/env bash
# For the next GPU session, call 1 (~9 minutes; carry .carry, .llama/llama-bench.xz -- rebuild it as in s17_call1.sh
# if .llama/ is gone): (1) bench/moe_gemm_bench.cu: MXFP4's direct f16 unpacking (lk_mxfp4_half, session 17, not yet
# run on a GPU) checked for every code and exponent, the grouped GEMM's variants timed with it; (2) gpt-oss-20b MXFP4
# side by side with llama-bench under the chunks-of-512 set (session 17 never timed it after the grouping's rewrite,
# the new tiles -- BM 128 for the down projection, BN 128 where the experts see 64 pairs each -- nor the unpacking);
# (3) tiny-gpt-oss (MXFP4) and tiny-moe trained and judged at chunks of 512 (600-token prompts).
set -u
. bench/calls/moe_prelude.sh
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/mgb bench/moe_gemm_bench.cu && timeout 100 /tmp/mgb | tee $OUT/moe-gemm.txt
MOE_SETS=("$MOE_512")
moe gpt-oss-20b mxfp4
JUDGE_SETS="$MOE_512
{\"numerics\":\"dequant\",\"gemm_half\":true,\"max_chunk\":512}" PROMPT_LENS="40 600" TINY_JUDGED="tiny-moe tiny-gpt-oss-mxfp4" \
  ONLY=tiny timeout 150 bash bench/calls/s15_trained_moe.sh
