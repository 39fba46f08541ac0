#!/usr/bin/env bash
# Session 30, call 6 (~5 minutes; carry .carry: this tree's build). Where #19's decode at depth 32k goes (call 4: the
# step attention's 8 warps and fold gained 5-10% alone in attention_bench but nothing measurable in the lane, 220-231
# tok/s either way).
# 1. One decode step's timeline at depth (bench/timeline.sh's new TL_PROMPT): llama-3.1-8b Q4_K_M, the record's set
#    with 32 splits, lanes of 33,024 positions, a 32,768-token prompt. Prediction: the attention ~50 us a layer (1.6
#    ms of ~4.4), the GEMVs as at short depth (~1.9 ms), the rest (~0.9 ms) in the launches after the attention (the o
#    projection's blocks cannot be resident early while 256 attention blocks of 108 KB hold the SMs).
# 2. ncu on the step attention alone at depth 32k (attention_bench mmafold, 16 and 32 splits): its stalls now.
set -u
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":32,"context":33024}'
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ab8 bench/attention_bench.cu &
KNOBS="$R" TL_PROMPT=32768 timeout 300 bash bench/timeline.sh $L /tmp/tl $OUT llama-3.1-8b
wait
xz -9 $OUT/tl-*.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
for sp in 16 32; do
  timeout 100 "$NCU" --set full --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -k regex:lk_attention_mma --launch-skip 8 --launch-count 1 --print-units base /tmp/ab8 mmafold 32768 $sp \
    > $OUT/ncu-attn32k-$sp.txt 2>&1
  echo "== ncu $sp splits"
  grep -E '^    Duration |DRAM Throughput|^    Memory Throughput|Achieved Occupancy|Registers Per Thread|L2 Hit Rate |Compute \(SM\) Throughput|Issue Slots Busy|issue_stalled' $OUT/ncu-attn32k-$sp.txt |
    awk '$NF+0 > 0.05 || !/issue_stalled/' | cut -c1-150 | head -40
done
