#!/usr/bin/env bash
# Prepared in session 31 for the next GPU session (not run: the budget spent; ~5 minutes; carry .carry: this tree's
# build). LK_XQ_SUMS (kernels/formats.cuh, a measurement switch, 0 in every lane): the decode GEMVs' int8 copy carries
# each 32-block's two half sums of its codes (written by the launch that quantizes) and the block formats' products
# read them instead of summing the codes again in every row's warp: 8 of a unit's 16 dp4a gone (session 31's ncu: the
# Q4_K GEMVs ~92 instructions a 32-group a lane, issue slots 53% busy at DRAM 54%, math pipe throttle 0.57). The
# same integers, so the same sums: the outputs bit for bit.
# 1. gemv_bench (the library's GEMVs after lk_quantize_i8<false>) built without and with it.
# 2. The lane: decode A/B on the record's sets (ab_decode.sh's NVFLAGS_B), logits compared (bitwise expected).
# Prediction: gemv_bench's Q4_K pair 19.6 -> ~18.5 us, the Q6_K down 22.3 -> ~21; decode 0.6B +1-2%, 8B +2-4%.
# PTX says little (611 -> 612 instructions for 4 units: the dp4a halve, the sums' loads and unpacking add), so
# only the H200 can say. If it holds: the switch's default 1 (the copy's room is there already), the old form
# removed.
set -u
export PATH=/usr/local/cuda/bin:$PATH
for v in 0 1; do [ -x /tmp/gb$v ] || nvcc -O3 -std=c++20 -arch=sm_90 -DLK_XQ_SUMS=$v -o /tmp/gb$v bench/gemv_bench.cu & done
wait
for v in 0 1; do timeout 100 /tmp/gb$v "lib rpw" > $OUT/gemv-sums$v.txt 2>&1; done
echo "shape variant us(sums 0) us(sums 1)"
paste <(awk '$NF == "equal" {print $1, $2, $(NF-2)}' $OUT/gemv-sums0.txt) <(awk '$NF == "equal" {print $(NF-2)}' $OUT/gemv-sums1.txt) | column -t
[ -f .carry/bundle.tar.xz ] || exit 0
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
for run in "qwen3-0.6b $S 130" "llama-3.1-8b $R 170"; do
  read -r P K T <<< "$run"
  KNOBS="$K" NVFLAGS_B="-DLK_XQ_SUMS=1" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
    timeout $T bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
done
