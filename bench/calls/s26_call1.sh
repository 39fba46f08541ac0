#!/usr/bin/env bash
# For the next GPU session (~4 minutes; carry .carry = this tree's build): why the decode step's tensor-core attention
# takes ~7 us a layer at one or two tiles (31% of the 0.6B's step at positions 5-133; session 25's record), and 18 us
# at depth 512 with one split. ncu --set full (bench/ncu_kernels.sh) on qwen3-0.6b Q4_K_M's step attention at depth 5
# (one tile) and at depth 512 with 1 and 8 splits (the fold in the attention), 2 launches each: its duration, DRAM,
# occupancy and the stall reasons. Prediction: at one tile, long scoreboard and barrier stalls over a chain of 4-5
# dependent memory round trips (the queries and the norm's weights, the rope tables, the tile, the merge, the output
# and its int8 copy), DRAM under 5%; the 8-split fold's last block ~1 us of the launch.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B8=${B/\"attn_splits\":1/\"attn_splits\":8}
for run in "5 $B" "512 $B" "512 $B8"; do
  d=${run%% *}; k=${run#* }
  echo "== depth $d $(echo "$k" | grep -o '"attn_splits":[0-9]*')"
  # (the step's attention alone: its ROPE template argument, 7 for qwen3's NeoX pairs and per-head norm; a chunk's has none)
  TYPE=q4_k_m KNOBS="$k" DEPTH=$d timeout 150 bash bench/ncu_kernels.sh $L /tmp/n$d qwen3-0.6b 'lk_attention_mma<128, 128, 1, 7>' 2 2>&1 |
    tee -a $OUT/ncu-attention.txt | tail -30
done
