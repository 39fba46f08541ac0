#!/usr/bin/env bash
# Session 30, call 4 (~6 minutes; carry .carry: this tree's build, .carry/a: session 29's last (HEAD 5ddee4a)).
# 1. Correctness of the tree as it will be committed (the step attention at 8 warps, the fold's loads in flight):
#    measure --verify on qwen3-0.6b Q4_K_M (prompts 5, 130, 700; 1 and 4 splits: the 4 splits' own fold) and the tiny
#    presets (4 splits under int8x2 + bf16).
# 2. #19 in the lane: llama-3.1-8b Q4_K_M, lanes of 33,024 positions (the record's set, f16 cache), a 32,768-token
#    prompt then 128 tokens, A (.carry/a) against B (this build) at 16 and 32 splits, two rounds. Prediction (the
#    attention alone in calls 1-2: 32 splits 55 -> 47.5 us, 16 splits 45 -> 43): decode at 32k 32 splits +6-8%
#    (224.6 -> ~240 tok/s), 16 splits +2-4%.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
. bench/common.sh
mkdir -p /tmp/ca && tar xJf .carry/a/bundle.tar.xz -C /tmp/ca
LA=/tmp/ca/lane-tune
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
S4=${S/\"attn_splits\":1/\"attn_splits\":4}
W=/tmp/d; mkdir -p $W
F=$(TYPE=q4_k_m checkpoint $L $W llama-3.1-8b)
: > $W/a.dirs; : > $W/b.dirs
for sp in 16 32; do
  K=${R/\"attn_splits\":1/\"attn_splits\":$sp}; echo "${K%\}},\"context\":33024}" > $W/k$sp.json
  $LA compile $F --knobs $W/k$sp.json -o $W/a$sp > /dev/null && echo $W/a$sp >> $W/a.dirs
  $L compile $F --knobs $W/k$sp.json -o $W/b$sp > /dev/null && echo $W/b$sp >> $W/b.dirs
done
(build_all $LA $W/a.dirs; build_all $L $W/b.dirs) > $W/build.txt 2>&1 &
echo "== 1. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130 700" 170 "$S" "$S4"
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"pdl":true,"pdl_first":true,"max_chunk":16,"kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":1}'
S8='{"numerics":"int8x2","gemv_prequant":true,"pdl":true,"max_chunk":64,"kv_cache":"bf16","attn_mma":2,"fuse_rope_kv":true,"attn_splits":4}'
verify_presets 60 "$S1" "$S8"
wait
cat $W/build.txt
echo "== 2. depth 32k A/B"
V=$(vocab $W/b16)
printf '128 %s\n' "$(tokens "$V" 32768 3)" > $W/deep
for r in 1 2; do
  for s in a16 b16 a32 b32; do
    timeout 100 $W/$s/lane $F $W/$s/lane.sidecar --prompts $W/deep --logits $W/$s.bin > $W/$s.txt 2> $W/$s.err
    echo "$s $(awk '/DECODE_TOK_PER_S/ {v=$2} END {print v}' $W/$s.txt) $(awk '/PREFILL_MS/ {v=$2} END {print v}' $W/$s.txt)" | tee -a $OUT/depth-ab.txt
  done
done
for sp in 16 32; do
  python3 bench/compare_logits.py $W/a$sp.bin $W/b$sp.bin $V --tol 3e-2 --tie 0.12 --ref-tokens $W/a$sp.txt \
    --out-tokens $W/b$sp.txt | grep -o 'rel_l2=[^ ]*\|tokens=[^ ]*\|verdict=[^ ]*' | tr '\n' ' '; echo " ($sp splits: B against A)"
done
