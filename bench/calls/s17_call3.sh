#!/usr/bin/env bash
# Session 17, call 3 (~9 minutes; carry .carry, .llama/llama-bench.xz): the mixtures' chunk after lk_moe_group's
# rewrite (warps' match_any ranks and a table, not a thread scanning a segment per expert) and the grouped expert
# GEMM's deeper weight prefetch (3 stages in registers under 64-row tiles, not 1): (1) bench/moe_gemm_bench.cu, the
# grouping judged against the host's and the GEMM's variants (stages in flight, the down projection's 64 or 128
# weight rows) timed alone at qwen3-30b-a3b's and gpt-oss-20b's shapes; (2) qwen3-30b-a3b Q8_0 side by side with
# llama-bench under the chunks-of-512 set; (3) tiny-moe and tiny-gpt-oss (MXFP4) trained and judged at chunks of 512;
# (4) gpt-oss-20b MXFP4 side by side.
set -u
. bench/calls/moe_prelude.sh
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/mgb bench/moe_gemm_bench.cu && timeout 120 /tmp/mgb | tee $OUT/moe-gemm.txt
A='"gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"kv_cache":"f16","attn_mma":2'
MOE_SETS=("{\"numerics\":\"int8\",$A,\"max_chunk\":512}")
moe qwen3-30b-a3b q8_0
JUDGE_SETS="{\"numerics\":\"int8\",$A,\"max_chunk\":512}
{\"numerics\":\"dequant\",\"gemm_half\":true,\"max_chunk\":512}" PROMPT_LENS="40 600" TINY_JUDGED="tiny-moe tiny-gpt-oss-mxfp4" \
  ONLY=tiny timeout 150 bash bench/calls/s15_trained_moe.sh
moe gpt-oss-20b mxfp4
