#!/usr/bin/env bash
# For the next GPU session, call 1 (~9 minutes; carry .carry, .llama/llama-bench.xz -- rebuild it as in
# s17_call1.sh if .llama/ is gone): the grouped expert GEMM's tiles chosen in session 17 (BM 128 for the down
# projection; BN 128 where the experts see 64 pairs each or more) in the lanes: gpt-oss-20b MXFP4 (first: session 17
# never timed it after the grouping's rewrite) and qwen3-30b-a3b Q8_0 side by side with llama-bench under the
# chunks-of-512 set, then tiny-gpt-oss (MXFP4) and tiny-moe trained and judged at chunks of 512 (600-token prompts).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
. bench/common.sh
. bench/calls/moe_side_by_side.sh
MOE_SETS=("$MOE_512")
moe gpt-oss-20b mxfp4
moe qwen3-30b-a3b q8_0
JUDGE_SETS="$MOE_512
{\"numerics\":\"dequant\",\"gemm_half\":true,\"max_chunk\":512}" PROMPT_LENS="40 600" TINY_JUDGED="tiny-moe tiny-gpt-oss-mxfp4" \
  ONLY=tiny timeout 150 bash bench/calls/s15_trained_moe.sh
