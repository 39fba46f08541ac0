#!/usr/bin/env bash
# For the next GPU session, call 1 (~9 minutes; carry .carry, .llama/llama-bench.xz, .llama/lib): session 16's call 3
# again with its fix (the decode step's copy of the experts' pairs' rows is int8, not gemm_half's f16). (1) tiny-
# qwen2moe and tiny-gpt-oss (MXFP4 experts) trained 20 s and judged on prompts of their text of 40 and 600 tokens (a
# chunk of 512 and the rest) under int8 / int8x2 with gemv_prequant and gemm_half in chunks of 512, the f16 cache and
# attn_mma 2; (2) qwen3-30b-a3b Q8_0 and gpt-oss-20b MXFP4 side by side with llama-bench under the same sets (chunks of
# 512 and 256).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
. bench/common.sh
A='"gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"kv_cache":"f16","attn_mma":2'
JUDGE_SETS="{\"numerics\":\"int8\",$A,\"max_chunk\":512}
{\"numerics\":\"int8x2\",$A,\"max_chunk\":512}
{\"numerics\":\"int8\",\"max_chunk\":64,\"gemv_prequant\":true}
{\"numerics\":\"dequant\",\"gemm_half\":true,\"max_chunk\":512}" PROMPT_LENS="40 600" TINY_JUDGED="tiny-qwen2moe tiny-gpt-oss-mxfp4" \
  ONLY=tiny timeout 240 bash bench/calls/s15_trained_moe.sh
. bench/calls/moe_side_by_side.sh
MOE_SETS=("{\"numerics\":\"int8\",$A,\"max_chunk\":512}" "{\"numerics\":\"int8\",$A,\"max_chunk\":256}")
moe qwen3-30b-a3b q8_0
moe gpt-oss-20b mxfp4
