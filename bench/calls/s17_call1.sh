#!/usr/bin/env bash
# Session 17, call 1 (~9 minutes; carry .carry, .llama/src.tar.xz): llama-bench built in the background on 12 of the
# 16 cores and brought back in parts (call 2's side by side), while (1) tiny-qwen2moe and tiny-gpt-oss (MXFP4 experts)
# are trained 20 s and judged on prompts of their text of 40 and 600 tokens (a chunk of 512 and the rest) under int8 /
# int8x2 with gemv_prequant and gemm_half in chunks of 512, the f16 cache and attn_mma 2 (session 16's call 3 again,
# with its fix: the decode step's copy of the experts' pairs' rows is int8, not gemm_half's f16); (2)
# bench/persistent_bench.cu, the persistent decode's question before it is built (#16, #18); (3) where qwen3-30b-a3b's
# prefill goes under the chunks-of-512 set (its first 8 layers profiled).
set -u
. bench/calls/prelude.sh
(taskset -c 4-15 bash bench/llama_build.sh .llama/src.tar.xz /tmp/lb /tmp/llama-bench > $OUT/llama-build.txt 2>&1 &&
  xz -T4 -6 -c /tmp/llama-bench | split -b 15M - $OUT/llama-bench.xz.) &
LB=$!
. bench/common.sh
A='"gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"kv_cache":"f16","attn_mma":2'
JUDGE_SETS="{\"numerics\":\"int8\",$A,\"max_chunk\":512}
{\"numerics\":\"int8x2\",$A,\"max_chunk\":512}
{\"numerics\":\"int8\",\"max_chunk\":64,\"gemv_prequant\":true}
{\"numerics\":\"dequant\",\"gemm_half\":true,\"max_chunk\":512}" PROMPT_LENS="40 600" TINY_JUDGED="tiny-qwen2moe tiny-gpt-oss-mxfp4" \
  ONLY=tiny taskset -c 0-3 timeout 240 bash bench/calls/s15_trained_moe.sh
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/pb bench/persistent_bench.cu && timeout 150 /tmp/pb > $OUT/persistent.txt 2>&1
echo "persistent rc=$?"
P='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512}'
LAYERS=8 TYPE=q8_0 timeout 120 bash bench/profile_best.sh $L /tmp/pq qwen3-30b-a3b "$P" > $OUT/profile-q30.txt 2>&1
echo "profile rc=$?"
wait $LB; echo "llama build rc=$? $(date)"; tail -2 $OUT/llama-build.txt
cat $OUT/persistent.txt | tail -30
cut -c1-200 $OUT/profile-q30.txt | tail -40
