#!/usr/bin/env bash
# Session 32, call 3 (~8 minutes; carry .carry: this tree's build as the bundle, session 31's build (f321c30, the
# kernels of 1549700) as .carry/a, gemv_bench built here three ways in .carry/gb). Two changes to the block formats'
# decode GEMVs, both keeping every product's integers and order (the logits bit for bit):
# (1) Q6_K's high bits laid out by the upload so that a word of codes takes one shift and mask of them
#     (formats.cuh's lk_q6k_high) where lk_spread2 took ~10 operations a word: PTX of the Q6_K GEMV 854 -> 532
#     instructions (rpw1), 1,529 -> 901 (rpw2). Prediction: gemv_bench's Q6_K down (rpw2) 15.8 -> ~12.5 us, the
#     logits 120 -> ~105; decode 8B Q4_K_M +3-5%, 0.6B Q4_K_M +2-4%.
# (2) LK_GEMV_XA_AHEAD: a round's unit j + 1's activations read before unit j's products (call 1's SASS: each unit's
#     three activation loads issued inside its guarded block and used at once). Prediction: Q4_K GEMVs 2-5% faster.
set -u
export PATH=/usr/local/cuda/bin:$PATH
G=.carry/gb
for v in head new xa; do timeout 100 $G/gb-$v "lib rpw" > $OUT/gemv-$v.txt 2>&1; done
echo "shape variant us(head) us(new: q6_k bits) us(new + xa ahead)"
ex() { awk '$NF == "equal" || $NF == "DIFFER" {print $(NF-2)}' $OUT/gemv-$1.txt; }
paste -d' ' <(awk '$NF == "equal" || $NF == "DIFFER" {print $1, $2, $(NF-3)}' $OUT/gemv-head.txt) <(ex head) <(ex new) <(ex xa)
for v in new xa; do cuobjdump -sass $G/gb-$v | xz -T4 > $OUT/sass-$v.txt.xz; done
. bench/calls/prelude.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
for run in "qwen3-0.6b $S 170" "llama-3.1-8b $R 230"; do
  read -r P K T <<< "$run"
  KNOBS="$K" AB_SIDES="a b c" NVFLAGS_C="-DLK_GEMV_XA_AHEAD=1" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 \
    AB_PROMPT_LENS="5 300" ROUNDS=3 timeout $T bash bench/ab_decode.sh /tmp/ca/lane-tune $L /tmp/ab $P 2>&1 |
    tee $OUT/ab-$P.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
done
