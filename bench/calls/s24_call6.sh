#!/usr/bin/env bash
# Session 24, call 6 (~5 minutes; carry .carry = this tree, .llama/llama-bench.xz): lk_gemm_w in the lane
# (half_gemm_shape's rule: sm_90 builds as sm_90a; GEMMs of 512+ rows with n and k >= 4,096 on wgmma).
# 1. Correctness: `measure --verify` (the CPU reference) on llama-3.1-8b's first 2 layers in Q4_K_M with a 600-token
#    prompt (a chunk of 512 rows: q, o, gate/up, down on lk_gemm_w), the record's set with chunks of 512 and of 256.
# 2. llama-3.1-8b Q4_K_M, prefill of 512 tokens, this build: A the record's set (chunks of 256: lk_gemm_h), B with
#    chunks of 512 (lk_gemm_w); logits compared on prompts of 5 and 600 (the working tree's size left no room for the
#    old build beside llama-bench).
# Prediction (gemm_bench's per-layer sums): B/A 1.25-1.35x (44.8 -> ~34 ms); verified; B's logits against A's ~1e-4,
# tokens equal.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
B512=${B/\"max_chunk\":256/\"max_chunk\":512}
W=/tmp/v8; mkdir -p $W
$L synth --preset llama-3.1-8b --layers 2 --type q4_k_m --seed 3 -o $W/l2.gguf -q
timeout 100 $L measure $W/l2.gguf --knobs-json "$B512" --verify --workload 600,4 --repeat 1 \
  --cache $W/cache > $OUT/l2.measure 2> $OUT/l2.err
echo "2-layer 8B: $(grep -cE '^ +[0-9]+ +verified ' $OUT/l2.measure) of 1 verified"; cut -c1-250 $OUT/l2.measure
[ -s $OUT/l2.measure ] || tail -5 $OUT/l2.err
TYPE=q4_k_m KNOBS_A="$B" KNOBS="$B512" PREFILL="512" AB_PROMPT_LENS="5 600" ROUNDS=2 \
  timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-8b.txt | grep "===="
grep -o "lk_gemm_w<[^>]*>" /tmp/ab/llama-3.1-8b.ab-b/lane.cu 2>/dev/null | sort | uniq -c | head
# 3. llama.cpp's prefill on the same file in the same run (llama-bench pp512, flash attention, all layers on the GPU).
. bench/calls/llama_prelude.sh
. bench/common.sh 2>/dev/null
F=$(TYPE=q4_k_m checkpoint $L /tmp/ab llama-3.1-8b)
timeout 40 /tmp/llama-bench -m $F -p 512 -n 0 -fa 1 -ngl 99 -r 5 2>&1 | tee $OUT/llama-bench.txt | grep -E "pp512|model"
