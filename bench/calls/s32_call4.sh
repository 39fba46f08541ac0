#!/usr/bin/env bash
# Session 32, call 4 (~8 minutes; carry .carry as call 3's). Call 3's build held LK_GEMV_XA_AHEAD's restructured
# rounds in every GEMV, which took the Q4_K GEMV's registers 58 -> 88 (4 -> 2 blocks an SM: gate 11.7 -> 14.0 us) and
# spilled the gate/up pair, hiding the Q6_K layout's gain (logits 120.7 -> 97.7 us). Now the rounds without the switch
# are the library's as before (PTX the same but for register names), so B is the Q6_K layout alone.
# (1) gemv_bench of B and of B with LK_GEMV_XA_AHEAD=1. (2) measure --verify of B on the tiny presets (tiny-llama's
# Q4_K_M mix holds Q6_K: dot, expand under dequant, the tensor-core chunks of gemm_blocks). (3) decode A/B/C: A the
# old build, B the new, C the new with LK_GEMV_XA_AHEAD=1 and 2 rows a warp (gemv_bench's best Q4_K down: 10.4 us
# against 12.6). Prediction: B/A 8B 1.03-1.05, 0.6B 1.02-1.04 (the Q6_K logits and downs); C/A ~B/A + 2%.
set -u
export PATH=/usr/local/cuda/bin:$PATH
G=.carry/gb
for v in new xa; do timeout 100 $G/gb-$v "lib rpw" > $OUT/gemv-$v.txt 2>&1; done
echo "shape variant us(new: q6_k bits) us(new + xa ahead)"
ex() { awk '$NF == "equal" || $NF == "DIFFER" {print $(NF-2)}' $OUT/gemv-$1.txt; }
paste -d' ' <(awk '$NF == "equal" || $NF == "DIFFER" {print $1, $2, $(NF-3)}' $OUT/gemv-new.txt) <(ex new) <(ex xa)
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
echo "== verify (B)"
R64=${R/\"max_chunk\":512/\"max_chunk\":64}
Q='{"numerics":"int8x2","gemv_prequant":true,"gemm_prequant":true,"pdl":true,"max_chunk":64,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"gemv_rows_q6_k":1}'
D='{"numerics":"dequant","max_chunk":16}'
verify_presets 100 "$R64" "$Q" "$D"
for run in "qwen3-0.6b $S 150" "llama-3.1-8b $R 200"; do
  read -r P K T <<< "$run"
  KNOBS="$K" KNOBS_C="${K/\"gemv_rows_per_warp\":1/\"gemv_rows_per_warp\":2}" AB_SIDES="a b c" NVFLAGS_C="-DLK_GEMV_XA_AHEAD=1" \
    TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout $T \
    bash bench/ab_decode.sh /tmp/ca/lane-tune $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
done
