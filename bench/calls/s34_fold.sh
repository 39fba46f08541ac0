#!/usr/bin/env bash
# Prepared in session 34 (no device lent) for the next GPU session (~5 minutes; carry .carry, rebuilt and re-bundled
# after session 34's commits). attn_fold_launch: the decode step's split attention on the tensor cores folded by a
# launch of its own (lk_attention_fold, a block a query head, the int8 copy its to write) in place of the last block
# of each key/value head (session 30's timeline at depth 32k: ~7 us from the last merge to the next release, of the
# attention's 45.5 us a layer). First the knob's lanes verified by the CPU reference (tiny-qwen3's shape told it was
# trained on 16,384 positions, lanes of 8,192: the knob's domain; 4, 32 and 64 splits, dequant and int8: the fold's
# one group, 2 and 4 groups of a head's threads (lk_fold_groups); bench/sweep.sh:
# prompts of 5, 23 and 300 tokens, --stagger bit for bit), then bench/depth.sh at depth 32k on llama-3.1-8b Q4_K_M:
# the record's set at 32 splits, with the knob at 32 and at 64 splits (whose own fold of 64 parts by one block lost
# to 32: 290 against 310 tok/s, session 31).
# Prediction: verified; decode at depth 32k 311 -> ~318 with the knob at 32 splits (the fold's ~7 us to ~4: a launch
# boundary, its maxima's and one round of values' L2 round trips, 32 blocks at once); 64 splits with it ~312 (its fold
# as short, in 4 groups; its 512 blocks two waves that the hardware balances).
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/v
echo '{"name":"q3long","architecture":"qwen3","layers":2,"d_model":256,"heads":4,"kv_heads":2,"head_dim":128,"ffn":768,"vocab":768,"context":16384,"rope_base":1000000,"norm_eps":1e-6,"qk_norm":true}' > /tmp/v/q3long.json
: > /tmp/v/first
for S in 4 32 64; do
  for N in dequant int8; do
    echo "{\"numerics\":\"$N\",\"gemv_prequant\":$([ $N = int8 ] && echo true || echo false),\"kv_cache\":\"f16\",\"attn_mma\":2,\"fuse_rope_kv\":true,\"attn_splits\":$S,\"attn_fold_launch\":true,\"max_chunk\":16,\"pdl\":true,\"context\":8192}" >> /tmp/v/first
  done
done
CONTEXT=8192 FIRST=/tmp/v/first timeout 200 bash bench/sweep.sh $L /tmp/v/sw 6 /tmp/v/q3long.json > $OUT/verify.txt 2>&1
echo "verify rc=$?"; sed -n '/==== sweep/,$p' $OUT/verify.txt | cut -c1-200
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"glu_stage":true,"attn_splits":'
SETS="${B}32}"$'\n'"${B}32,\"attn_fold_launch\":true}"$'\n'"${B}64,\"attn_fold_launch\":true}"
TYPE=q4_k_m KNOB_SETS="$SETS" timeout 330 bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth.txt 2>&1
echo "depth rc=$?"; cut -c1-160 /tmp/d/depth.txt
