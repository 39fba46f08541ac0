#!/usr/bin/env bash
# Session 27, call 8 (~2 minutes; no carry): ncu's source page of the decode step's attention at depth 32768 with the
# straight tile copies (attention_bench mmafold), 32 splits (two blocks an SM) and 16 (one), for what bounds it now.
# Prediction: the copies' share of the stall samples 34% -> ~10%; the tile's arithmetic and its barriers the rest.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/abn bench/attention_bench.cu
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
for sp in 32 16; do
  timeout 100 $NCU --set full --import-source yes -k regex:lk_attention_mma --launch-skip 4 --launch-count 1 -o /tmp/rep$sp \
    /tmp/abn mmafold 32768 $sp > /tmp/ncu$sp.log 2>&1; echo "ncu $sp rc=$?"
  $NCU -i /tmp/rep$sp.ncu-rep --page source --csv --print-source sass > $OUT/attn32k-$sp-source.csv 2> /dev/null
  $NCU -i /tmp/rep$sp.ncu-rep --page details --print-units base > $OUT/attn32k-$sp-details.txt 2>&1
  grep -E "Duration|DRAM Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per" $OUT/attn32k-$sp-details.txt | head
done
