#!/usr/bin/env bash
# Session 27, call 3 (~4 minutes; no carry): the decode step's tensor-core attention at depth (#19: ~2.7 TB/s at 32k
# under ncu, 0.39 of the bound in the lane), bench/attention_bench.cu's mmafold (the lane's attn_mma 2).
# 1. Two switches of kernels/attention_mma.cuh, four builds: LK_AM_QK_SPLIT (the scores' 8-deep mma chain over the
#    head's 128 dims split in two accumulators of 4, added after: a shorter dependent chain a tile), LK_AM_SKIP_RESCALE
#    (the 64 multiplies rescaling a warp's outputs skipped where none of its rows' maxima moved: exact).
# 2. ncu's source page (SASS, stall samples an instruction) of the unchanged kernel at depth 32768 with 32 splits.
# (Both switches were removed after this call: neither paid.)
# Prediction: a latency-bound tile loop (session 22: a tile ~1.6 us a block alone, ~2.3 at two blocks an SM): QK_SPLIT
# +5-10% at 32k, SKIP_RESCALE +3-5%; the stall samples mostly at the tile's mma chain and the barriers, not DEPBAR.
set -u
export PATH=/usr/local/cuda/bin:$PATH
for v in 00 10 01 11; do
  nvcc -O3 -std=c++17 -arch=sm_90 -DLK_AM_QK_SPLIT=${v:0:1} -DLK_AM_SKIP_RESCALE=${v:1:1} -o /tmp/ab_$v bench/attention_bench.cu &
done
wait
echo "== 1. mmafold: us a layer by variant (QK_SPLIT, SKIP_RESCALE)"
for v in 00 10 01 11 00; do /tmp/ab_$v mmafold > $OUT/mmafold-$v.txt 2>&1; done
python3 - "$OUT" <<'PY'
import sys, collections
out = sys.argv[1]
rows = collections.OrderedDict()
for v in ["00", "10", "01", "11"]:
    for line in open(f"{out}/mmafold-{v}.txt"):
        f = line.split()
        if len(f) >= 6 and f[0] == "mmafold":
            rows.setdefault((f[2], f[3]), {})[v] = (f[4], f[7] if len(f) > 7 else "")
print("depth splits | 00 | 10 (qk split) | 01 (skip rescale) | 11 | max diff 00/11")
for (d, s), r in rows.items():
    print(d, s, "|", " | ".join(r.get(v, ("?", ""))[0] for v in ["00", "10", "01", "11"]), "|", r.get("00", ("", ""))[1], r.get("11", ("", ""))[1])
PY
echo "== 2. ncu source at 32768 / 32"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -1)
timeout 150 $NCU --set full --import-source yes -k regex:lk_attention_mma --launch-skip 4 --launch-count 1 -o /tmp/rep \
  /tmp/ab_00 mmafold 32768 32 > /tmp/ncu.log 2>&1; echo "ncu rc=$?"; tail -2 /tmp/ncu.log
$NCU -i /tmp/rep.ncu-rep --page source --csv --print-source sass > $OUT/attn32k-source.csv 2> $OUT/attn32k-source.err
$NCU -i /tmp/rep.ncu-rep --page details --print-units base > $OUT/attn32k-details.txt 2>&1
grep -E "Duration|DRAM Throughput|Executed Ipc A|Issue Slots Busy|Achieved Occupancy|Registers Per|Compute \(SM\)" $OUT/attn32k-details.txt | head
