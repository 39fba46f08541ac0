#!/usr/bin/env bash
# Session 26, call 3 (~6 minutes; carry .carry = this tree's build). Call 2: gemv_norm costs the 0.6B 11.5% and the 8B
# 33.5% (each projection's blocks norming the row took ~1-2 us more a launch than the norm's launch it replaced).
# 1. The quantize fold alone (LT_FOLD_QUANTIZE_ONLY at compile: the norms keep their launches, the down projection's
#    blocks quantize the gate/up product, o and down unchanged): qwen3-0.6b decode A/B against the record.
# 2. ncu's source page (SASS, warp stall samples an instruction) of the 0.6B's step attention at depth 5, as CSV.
# Predictions: the quantize fold alone 0.98-1.02x (28 quantize launches of ~1 us against ~0.7 us more in the down
# projection); the attention's samples mostly at the rope's loads and the tile's waits.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
N=${B/\"attn_splits\":1/\"attn_splits\":1,\"gemv_norm\":true}
echo "== 1. the quantize fold alone"
LT_FOLD_QUANTIZE_ONLY=1 TYPE=q4_k_m KNOBS_A="$B" KNOBS="$N" PREFILL=64 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 150 \
  bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-quantize-only.txt | grep -E "decode A|tokens" | cut -c1-200
echo "== 2. ncu source"
. bench/common.sh
W=/tmp/ns; mkdir -p $W
F=$(TYPE=q4_k_m checkpoint $L $W qwen3-0.6b)
echo "$B" > $W/k.json
$L compile $F --knobs $W/k.json -o $W/lane > /dev/null && $L build $W/lane --arch sm_90 > $W/build.log 2>&1 || tail -3 $W/build.log
printf '2 %s\n' "$(tokens 151000 5 5)" > $W/p
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
timeout 150 $NCU --set full --import-source yes -k regex:lk_attention_mma --launch-skip 28 --launch-count 1 -o $W/rep \
  $W/lane/lane $F $W/lane/lane.sidecar --prompts $W/p > $W/ncu.log 2>&1; echo "ncu rc=$?"; tail -2 $W/ncu.log
$NCU -i $W/rep.ncu-rep --page source --csv --print-source sass > $OUT/attn-source.csv 2> $OUT/attn-source.err
echo "source rows: $(wc -l < $OUT/attn-source.csv)"; head -3 $OUT/attn-source.csv | cut -c1-400
$NCU -i $W/rep.ncu-rep --page details --print-units base > $OUT/attn-details.txt 2>&1
grep -E "Duration|Executed Instructions|Issued Instructions|SM Frequency|Elapsed Cycles" $OUT/attn-details.txt | head
