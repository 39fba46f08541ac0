#!/usr/bin/env bash
# Prepared in session 32 for the next GPU session (~6 minutes; carry .carry: this tree's build). LK_Q4_HI16
# (kernels/formats.cuh, a measurement switch, 0 in every lane): Q4_0/Q4_1/Q4_K's high nibbles taken in place as 16x
# the codes into an unsigned-by-signed dp4a, the half's sum shifted down once: the same integers (the outputs bit for
# bit), 3 instructions fewer a unit (PTX of the Q4_K GEMV 468 -> 456 for 4 units, the pair 844 -> 820).
# (1) gemv_bench without and with it; (2) measure --verify with it on tiny presets in q4_k_m, q4_0 and q4_1;
# (3) the lane's decode A/B (NVFLAGS_B), logits compared. Prediction: the Q4_K GEMVs 1-3% faster, decode +0.5-1.5%.
# If it holds: the switch's default 1, the old form removed.
set -u
export PATH=/usr/local/cuda/bin:$PATH
for v in 0 1; do nvcc -O3 -std=c++20 -arch=sm_90 -DLK_Q4_HI16=$v -o /tmp/gq$v bench/gemv_bench.cu & done
wait
for v in 0 1; do timeout 100 /tmp/gq$v "lib rpw1,glu lib" > $OUT/gemv-hi16-$v.txt 2>&1; done
echo "shape variant us(hi16 0) us(hi16 1) bits(1)"
paste -d' ' <(awk '$NF == "equal" {print $1, $2, $(NF-2)}' $OUT/gemv-hi16-0.txt) \
  <(awk '$NF == "equal" || $NF == "DIFFER" {print $(NF-2), $NF}' $OUT/gemv-hi16-1.txt)
. bench/calls/prelude.sh
printf '#!/bin/sh\nexec /usr/local/cuda/bin/nvcc -DLK_Q4_HI16=1 "$@"\n' > /tmp/nvcc_hi16 && chmod +x /tmp/nvcc_hi16
I8='{"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"fuse_qkv":true,"fuse_glu":true,"pdl":true,"max_chunk":64,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true}'
D='{"numerics":"dequant","max_chunk":16}'
. bench/calls/verify_presets.sh
VERIFY_PRESETS="tiny-llama:q4_k_m tiny-llama:q4_0 tiny-qwen3:q4_1" LT_NVCC=/tmp/nvcc_hi16 verify_presets 80 "$I8" "$D"
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
for run in "qwen3-0.6b $S 130" "llama-3.1-8b $R 170"; do
  read -r P K T <<< "$run"
  KNOBS="$K" NVFLAGS_B="-DLK_Q4_HI16=1" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
    timeout $T bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
done
