#!/usr/bin/env bash
# Session 23, call 3 (~8 minutes; carry .carry = this tree, .carry-old = call 2's build): the K-quant headers of the
# decode GEMVs (#18/#16: the gate/up GEMV ~142 instructions a unit pair in call 1's SASS, 40 of them the 6-bit scale's
# divergent branch and 15 the header's 64-bit addresses): the load lays Q4_K/Q5_K's scales and mins out as bytes
# (sub-block j's scale and the min's low bits in byte 4 + j, the min's high nibbles in the last word), decoded
# branch-free; a lane takes 3 header words by shuffles, not 4; the header's address a round's constant offsets.
# 1. Correctness: bench/formats_check.sh on q4_k, q5_k, q4_k_m, q5_k_m (sets 0 4 6 7 10: GEMVs, the GEMMs' unpacking,
#    lane.cu's uploads) against the CPU reference.
# 2. A/B (bench/ab_decode.sh): A call 2's build, B this tree, the record's knobs with attn_rope, 8B and 0.6B Q4_K_M.
#    Prediction: 8B +3-5%, 0.6B +1-2%; logits bitwise equal.
# 3. The SASS of both builds' gate/up GEMV (instructions in the function), then the 0.6B's per-launch profile.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
SETS_ONLY="0 4 6 7 10" TYPES="q4_k q5_k q4_k_m q5_k_m" LANE_TYPES="q4_k_m" SPEED_PRESETS="" timeout 200 bash bench/formats_check.sh $L /tmp/f 2>&1 |
  tee $OUT/formats.txt | grep -v "^ " | head -20
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1,"attn_rope":true}'
for P in llama-3.1-8b qwen3-0.6b; do
  TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 170 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab $P 2>&1 |
    tee $OUT/ab-$P.txt | grep "===="
done
for s in a b; do
  cuobjdump -sass /tmp/ab/llama-3.1-8b.ab-$s/lane 2>/dev/null |
    awk '/Function :/ {keep = ($0 ~ /lk_gemv_glu.*Li1ELi1E5lk_xq/)} keep' > /tmp/glu-$s.sass
  echo "glu sass $s: $(grep -cE '^ +/\*[0-9a-f]{4}\*/' /tmp/glu-$s.sass) instructions"
done
xz -9c /tmp/glu-b.sass > $OUT/glu-b.sass.xz
TYPE=q4_k_m timeout 150 bash bench/profile_best.sh $L /tmp/p qwen3-0.6b "$B" > $OUT/profile-0.6b.txt 2>&1
grep -A14 "fastest valid decode" $OUT/profile-0.6b.txt; tail -1 $OUT/profile-0.6b.txt
