#!/usr/bin/env bash
# Session 16, call 2 (~3 minutes; carry .carry): where the mixtures' decode step and prefill chunk go (#17: decode
# 0.64-0.72x llama.cpp, prefill 0.46-0.58x in call 1). qwen3-30b-a3b q8_0 and gpt-oss-20b mxfp4 in their first 8
# layers (a layer's launches are the full model's), profiled under call 1's int8 + gemm_half set by
# bench/profile_best.sh: the decode step's and the 256-row chunk's launches by kind.
set -u
. bench/calls/prelude.sh
I='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"fuse_qkv":true,"max_chunk":256,"pdl":true}'
LAYERS=8 TYPE=q8_0 timeout 150 bash bench/profile_best.sh $L /tmp/pq qwen3-30b-a3b "$I" > $OUT/profile-q30.txt 2>&1
echo "q30 rc=$?"; cat $OUT/profile-q30.txt | cut -c1-200
LAYERS=8 TYPE=mxfp4 timeout 150 bash bench/profile_best.sh $L /tmp/po gpt-oss-20b "$I" > $OUT/profile-oss.txt 2>&1
echo "oss rc=$?"; cat $OUT/profile-oss.txt | cut -c1-200
