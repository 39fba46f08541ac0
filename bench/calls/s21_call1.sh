#!/usr/bin/env bash
# For the next GPU session (~9 minutes; carry .carry, .carry-old): three changes of session 20 after its calls.
# (a) gemv_prequant for a chunk's GEMV slabs: one row-by-row int8 copy of a chunk's rows that every slab reads, where
#     each warp quantized its rows' activations again (the 8B's 4-row gate/up slab took 646 us under ncu, L1-bound).
# (b) the decode step's attention with one split writes the int8 copy of its output itself (no fold launch, no
#     quantize launch: two launches a layer fewer where the tuner picks attn_splits 1, i.e. short contexts).
# (c) the fused gate/up GEMV writes the down projection's int8 copy (a group of 32 rows' last block quantizes it):
#     the decode step's last quantize launch gone (formats_check's sets 6, 8 and 10 run it).
# (d) fuse_qkv fuses q and k beside a Q6_K v (Q4_K_M's mix): two launches instead of three in those layers
#     (formats_check's q4_k_m / q5_k_m sets with fuse_qkv run it).
# (1) correctness: formats_check.sh's sets (6, 8 and 10 run gemv_prequant with chunks of 2-8 rows as slabs) on 5 types
#     against the CPU reference. Prediction: as call 3 of session 20 (q4_k_m, q6_k 11 of 11; the others 10 of 11, the
#     11th set's gemv_rows_q6_k refused where there is no Q6_K).
# (2) A/B against session 20's calls' build (.carry-old) on llama-3.1-8b and qwen3-0.6b Q4_K_M: prefill of 300 tokens
#     (256 + 32 + 8 + 4: two slab chunks) and of 5 (4 + 1). Prediction: 8B prefill(300) ~60 ms shorter (~2x), prefill(5)
#     ~30 ms -> ~5 ms; decode (c) + (d): 8B +5-6% (48 launches of ~2.5 us fewer), 0.6B +10-13%.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
TYPES="q4_k_m q4_k q6_k mxfp4 q8_0" LANE_TYPES="q4_k_m" SPEED_PRESETS="" timeout 240 bash bench/formats_check.sh $L /tmp/f > $OUT/formats.txt 2>&1
echo "formats rc=$?"; sed -n '/---- table/,$p' $OUT/formats.txt
# (b)'s correctness: one split with the copy, each attention kernel, against the reference (prediction: verified).
for T in q4_k_m q8_0; do
  P=tiny-qwen3; [ $T = q4_k_m ] && P=tiny-llama
  timeout 150 $L measure /tmp/f/$P-$T.gguf --verify --workload 64,16 --repeat 1 --cache /tmp/f/cache \
    --knobs-json '{"numerics":"int8","gemv_prequant":true,"attn_splits":1}' \
    --knobs-json '{"numerics":"int8","gemv_prequant":true,"attn_splits":1,"attn_lanes":true,"kv_cache":"f16"}' \
    --knobs-json '{"numerics":"int8x2","gemv_prequant":true,"attn_splits":1,"attn_mma":2,"kv_cache":"f16","pdl":true}' \
    --knobs-json '{"numerics":"int8","gemv_prequant":true,"attn_splits":1,"attn_heads":1,"fuse_qkv":true}' \
    > $OUT/one-split-$T.txt 2>&1; echo "one split $T rc=$?"; grep -E '^ +[0-9]+ +(verified|screened|failed) ' $OUT/one-split-$T.txt | cut -c1-200
done
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256}'
for P in llama-3.1-8b qwen3-0.6b; do
  TYPE=q4_k_m KNOBS="$B" PREFILL="300 5" timeout 170 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep "===="
  # (b)'s speed: one split (attention writes the copy) against call (a)'s 4-split set, the new build both times.
  # Prediction: 0.6B decode +8-12% (28 x 2 launches of ~2.7 us a step fewer), 8B +3-5%.
  TYPE=q4_k_m KNOBS_A="$B" KNOBS="${B%\}},\"attn_splits\":1}" timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab1-$P.txt | grep "===="
done
