#!/usr/bin/env bash
# For the next GPU session (~4 minutes; carry .carry = this tree): what the decode step's tensor-core attention's
# fixed ~7 us a layer is (session 23: 7.4 us on the 8B, 7.8 on the 0.6B, 11% and 32% of their steps; not its tiles'
# latency, not its splits, not the SMs' carveout). ncu --set full with the stall reasons on the step attention (with its
# rope) of layers 8-9 of the decode step, 8B and 0.6B Q4_K_M at depth 128 (the tg128 shape) and 8B at 2,048.
# Prediction: a latency chain -- few warps (4 a block, 8 blocks on 8 SMs at one split), most cycles stalled on
# barriers and long scoreboard between the PDL wait and the end; DRAM under 10%.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
# (preset, depth, launches to skip: the prompt's chunks run lk_attention_mma too -- a launch a layer a chunk of at most
# 256 rows -- then the decode step's layers 0-7)
for PDS in llama-3.1-8b:128:40 qwen3-0.6b:128:36 llama-3.1-8b:2048:264; do
  IFS=: read -r P DEPTH SKIP <<< "$PDS"
  TYPE=q4_k_m KNOBS="$B" DEPTH=$DEPTH SKIP=$SKIP timeout 150 bash bench/ncu_kernels.sh $L /tmp/n-$DEPTH $P 'lk_attention_mma' 2 \
    > $OUT/ncu-$P-$DEPTH.txt 2>&1
  cp /tmp/n-$DEPTH/$P.ncuk.txt $OUT/ncu-full-$P-$DEPTH.txt 2>/dev/null
  echo "== $P depth $DEPTH"; grep -E 'Duration|DRAM Throughput|Achieved Occ|barrier|long_scoreboard|wait' $OUT/ncu-$P-$DEPTH.txt | cut -c1-120 | head -16
done
