#!/usr/bin/env bash
# Prepared in session 33 for the next GPU session (~8 minutes; carry .carry: this tree's build; session 33 got no
# device after call 2). gemv_pipe, the knob built from call 2's gemv_bench: the decode step's plain GEMVs over Q8_0
# and the block formats but Q6_K, and the fused gate/up GEMV's joint rounds over the int8 copy, with pipelined rounds
# (1: two rows a warp of a unit each a round for the plain ones -- Q4_K gate-sized 11.7 -> 10.3 us, q-sized 4.7 ->
# 4.0, down 12.6 -> 11.2; 2: a row of two units -- Q8_0 down 19.2 -> 17.7, q 6.5 -> 6.2). Call 2's switch pipelined
# every GEMV (Q6_K's 2-row ones too: 14.6 -> 18.5) and lost (0.961 / 0.990 / 0.932); the knob leaves Q6_K and the
# q/k/v parts alone. (0) gemv_bench: the pair pipelined; (1) measure --verify: tiny presets under int8 with gemv_pipe
# 1 and 2; (2) decode A/B/C on the 8B Q4_K_M (the record, + gemv_pipe 1, + 2), the 8B Q8_0 (+ 2, + 1) and the 0.6B
# Q4_K_M (+ 1). Prediction: 8B Q4_K_M B +2-4% (o, the Q4_K downs, the pair), Q8_0 B +2%, 0.6B +-1%; logits bitwise
# equal. If B or C wins: a prior with it (coordinator/src/model_search.cpp), then bench/speed.sh.
set -u
# (0) gemv_bench: the pipelined forms as the knob builds them now (the first two rounds asked before the wait on the
# launch before, as the plain form asks its four; 4 blocks an SM asked for the knob's forms) and the gate/up pair's
# joint rounds pipelined (A 1: 53 registers against 80). Prediction: the single shapes as call 2 or better; the pair
# 18.4 -> ~16.5 us with one unit a round.
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++20 -arch=sm_90 -o /tmp/gb bench/gemv_bench.cu || exit 1
for s in gate+up down "q " "gate "; do
  GB_SHAPE="$s" timeout 50 /tmp/gb "lib rpw1,lib rpw2,pipe2 rpw1,pipe1 rpw2,glu lib" 2>&1 | grep -v "^shape"
done > $OUT/gemv-pipe.txt; grep -v base $OUT/gemv-pipe.txt | cut -c1-90
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
I8='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"gemv_pipe":1}'
VERIFY_PRESETS="tiny-llama:q4_k_m tiny-qwen3:q8_0 tiny-qwen3:q4_0" verify_presets 90 "$I8" "${I8/\"gemv_pipe\":1/\"gemv_pipe\":2}" \
  "${I8/\"gemv_prequant\":true,/}"
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
Q='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
p() { echo "${1%\}},\"gemv_pipe\":$2}"; }
ab() {  # TAG TYPE PRESET LIMIT A B [C]
  KNOBS_A="$5" KNOBS="$6" KNOBS_C="${7:-}" TYPE=$2 PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
    timeout $4 bash bench/ab_decode.sh $L $L /tmp/ab-$1 $3 2>&1 | tee $OUT/ab-$1.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
}
ab 8b q4_k_m llama-3.1-8b 190 "$R" "$(p "$R" 1)" "$(p "$R" 2)"
ab 8b-q8 q8_0 llama-3.1-8b 190 "$Q" "$(p "$Q" 2)" "$(p "$Q" 1)"
ab 06b q4_k_m qwen3-0.6b 110 "$S" "$(p "$S" 1)"
