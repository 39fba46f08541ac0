#!/usr/bin/env bash
# Session 21, call 4 (~5 minutes; carry .carry, .carry-gj): two changes to the decode GEMVs, where call 3's profile has
# the 8B's gate/up GEMV at 22.8 us a launch (2.9 TB/s of 4.58) and the other GEMVs at ~2.5 TB/s.
# (P) gemv_prefetch (a knob, 0/1/2): each decode GEMV block, as it starts, bulk-prefetches into L2 the weights of the
#     block 1 or 2 waves (4 blocks an SM) after it, so HBM streams the next wave's rows while this wave's warps wait
#     on their own loads (what is in flight is otherwise what the warps' registers hold).
# (J) GLU_JOINT (.carry-gj; .carry has it off): the fused gate/up GEMV of the decode step loads a round of both
#     matrices before using either: one DRAM round trip a warp, not two (80 registers, 3 blocks an SM, not 64 and 4).
# Both keep the numbers: the A/B's logits should be bitwise equal (rel_l2 0). Prediction: P1 8B +5-10%, 0.6B +0-5%
# (its matrices are one wave or less); P2 between; J 8B +3-8%.
# (Run once, session 21: P was slower (-5.8% on the 8B) and the knob was removed after; J was kept.)
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/gj && tar xJf .carry-gj/bundle.tar.xz -C /tmp/gj
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256}'
P1="${B%\}},\"gemv_prefetch\":1}"; P2="${B%\}},\"gemv_prefetch\":2}"
# Correctness against the reference: J and P on three formats (a K-quant mix, Q8_0, MXFP4's byte scales).
mkdir -p /tmp/f
for T in q4_k_m mxfp4; do
  P=tiny-qwen3; [ $T = q4_k_m ] && P=tiny-llama
  K=$B; [ $T = q4_k_m ] || K=${B/,\"gemv_rows_q6_k\":2/}
  /tmp/gj/lane-tune synth --preset $P --type $T --seed 1 -o /tmp/f/$P-$T.gguf -q
  timeout 120 /tmp/gj/lane-tune measure /tmp/f/$P-$T.gguf --verify --workload 64,16 --repeat 1 --cache /tmp/f/cache \
    --knobs-json "${K%\}},\"gemv_prefetch\":1}" --knobs-json "${K%\}},\"gemv_prefetch\":2,\"gemv_warps\":4}" \
    > $OUT/verify-$T.txt 2>&1; echo "verify $T rc=$?"; grep -E '^ +[0-9]+ +(verified|screened|failed) ' $OUT/verify-$T.txt | cut -c1-160
done
# (budget: 4 A/Bs, the 8B's first)
P=llama-3.1-8b
TYPE=q4_k_m KNOBS_A="$B" KNOBS="$P1" PREFILL="5 512" timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-p1-$P.txt | grep "===="
TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 150 bash bench/ab_decode.sh $L /tmp/gj/lane-tune /tmp/ab $P 2>&1 | tee $OUT/ab-gj-$P.txt | grep "===="
# Both together against neither, the 8B and the 0.6B.
for P in llama-3.1-8b qwen3-0.6b; do
  TYPE=q4_k_m KNOBS_A="$B" KNOBS="$P1" PREFILL="5" timeout 150 bash bench/ab_decode.sh $L /tmp/gj/lane-tune /tmp/ab $P 2>&1 | tee $OUT/ab-p1gj-$P.txt | grep "===="
done
