#!/usr/bin/env bash
# Session 17, call 2 (~9 minutes; carry .carry, .llama/llama-bench.xz): qwen3-30b-a3b Q8_0 and gpt-oss-20b MXFP4
# side by side with llama-bench (#17's speed goal) under the sets judged in call 1 (int8 with gemv_prequant and
# gemm_half, the f16 cache and attn_mma 2; chunks of 512 and 256).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
. bench/common.sh
. bench/calls/moe_side_by_side.sh
A='"gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"kv_cache":"f16","attn_mma":2'
MOE_SETS=("{\"numerics\":\"int8\",$A,\"max_chunk\":512}" "{\"numerics\":\"int8\",$A,\"max_chunk\":256}")
moe qwen3-30b-a3b q8_0
moe gpt-oss-20b mxfp4
