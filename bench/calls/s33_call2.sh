#!/usr/bin/env bash
# Session 33, call 2 (~6 minutes; carry .carry: this tree's build). The block formats' GEMV rounds pipelined
# (lk_gemv_sums_i8b's and lk_gemv_sums_i8's PIPE: round r + 1's weights asked before round r's products; the same
# units in the same order).
# Why: the 8B's down projection (4096 rows of 14,336) is under one wave (512 blocks, 528 slots), each warp 3.5 rounds
# of latency then products, one after the other; ptxas: Q4_K pipe2 rpw1 55 registers (the library's 57), Q6_K pipe2
# rpw1 64 (rpw2 117), Q8_0 pipe2 rpw1 52 (62). (1) gemv_bench, the library's forms against the pipelined ones
# (Q8_0's shapes new); (2) decode A/B on the 8B Q4_K_M (B: -DLK_GEMV_PIPE=2, the plain GEMVs pipelined at 2 units a
# round; C: the same with gemv_rows_q6_k 1), the 8B Q8_0 (B) and the 0.6B Q4_K_M (B). Prediction: Q4_K down 12.6 ->
# ~10.5 us, Q6_K down rpw1 19 -> ~14, Q8_0 down -15%; the k = 4096 block shapes within 2%; decode 8B Q4_K_M B
# +2-4%, Q8_0 +3-6%, the 0.6B +-1%; logits bitwise equal.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb bench/gemv_bench.cu || exit 1
GB_SHAPE=down timeout 60 /tmp/gb "lib rpw1,lib rpw2,lib pipe" > $OUT/gemv-pipe-down.txt 2>&1
for s in "q " "gate "; do GB_SHAPE="$s" timeout 40 /tmp/gb "lib rpw1,lib rpw2,lib pipe" 2>&1 | grep -v "^shape"; done > $OUT/gemv-pipe-rest.txt
cat $OUT/gemv-pipe-down.txt $OUT/gemv-pipe-rest.txt | grep -v base | cut -c1-90
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
R1=${R/\"gemv_rows_q6_k\":2/\"gemv_rows_q6_k\":1}
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
KNOBS="$R" KNOBS_C="$R1" NVFLAGS_B="-DLK_GEMV_PIPE=2" NVFLAGS_C="-DLK_GEMV_PIPE=2" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 \
  AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-8b.txt \
  | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
Q='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
KNOBS="$Q" NVFLAGS_B="-DLK_GEMV_PIPE=2" TYPE=q8_0 PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 170 bash bench/ab_decode.sh $L $L /tmp/ab8 llama-3.1-8b 2>&1 | tee $OUT/ab-8b-q8.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
KNOBS="$S" NVFLAGS_B="-DLK_GEMV_PIPE=2" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 120 bash bench/ab_decode.sh $L $L /tmp/ab6 qwen3-0.6b 2>&1 | tee $OUT/ab-06b.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
