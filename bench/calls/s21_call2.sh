#!/usr/bin/env bash
# Session 21, after call 1 (~6 minutes; carry .carry-old, .carry-rev, .carry-blk): call 1 found the 8B's decode 4.6%
# slower than session 20's build (403.0 vs 422.5 tok/s; 0.6B 2.2% slower) with the same knobs. Suspect: (c), the
# fused gate/up GEMV writing the down projection's int8 copy through a counter a 32-row group (each block's threads
# fence their stores, count in, the last block quantizes): 1,792 blocks a launch on the 8B each held a fence longer.
# REV = HEAD without (c) (the quantize launch back); BLK = HEAD with the gate/up GEMV's block covering whole 32-row
# groups where it writes the copy (4 rows a warp), quantizing them itself after a barrier: no counter, no fence.
# Prediction: REV ~= OLD (422), BLK >= OLD (a launch a layer fewer: ~430 if RPW 4 costs nothing).
set -u
. bench/calls/prelude.sh
for b in old rev blk; do mkdir -p /tmp/$b && tar xJf .carry-$b/bundle.tar.xz -C /tmp/$b; done
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256}'
# BLK's correctness against the reference (the glu's in-block copy, with prequant slabs and one/four splits).
mkdir -p /tmp/f
for T in q4_k_m q8_0; do
  P=tiny-qwen3; [ $T = q4_k_m ] && P=tiny-llama
  /tmp/blk/lane-tune synth --preset $P --type $T --seed 1 -o /tmp/f/$P-$T.gguf -q
  timeout 120 /tmp/blk/lane-tune measure /tmp/f/$P-$T.gguf --verify --workload 64,16 --repeat 1 --cache /tmp/f/cache \
    --knobs-json "$B" --knobs-json "${B%\}},\"attn_splits\":1}" --knobs-json "${B%\}},\"gemv_warps\":4}" \
    > $OUT/blk-verify-$T.txt 2>&1; echo "blk verify $T rc=$?"; grep -E '^ +[0-9]+ +(verified|screened|failed) ' $OUT/blk-verify-$T.txt | cut -c1-160
done
for P in llama-3.1-8b qwen3-0.6b; do
  for V in rev blk; do
    TYPE=q4_k_m KNOBS="$B" PREFILL="5" timeout 150 bash bench/ab_decode.sh /tmp/old/lane-tune /tmp/$V/lane-tune /tmp/ab $P 2>&1 | tee $OUT/ab-$V-$P.txt | grep "===="
  done
done
