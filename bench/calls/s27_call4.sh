#!/usr/bin/env bash
# Session 27, call 4 (~2 minutes; no carry): call 3's ncu at depth 32k (raw -call3/attn32k-source.csv): the tile
# copies' loop (the stage lambda: conditions, a division and 64-bit addresses a 16-byte piece) is 5,976 instructions a
# warp over 16 tiles, more than the tiles' arithmetic (4,732), and 34% of the stall samples. LK_AM_FAST_COPY: a whole
# tile takes straight copies (lk_am_copy_tile, ~4 instructions a piece). bench/attention_bench.cu, mmafold (the
# decode step) and mma (chunks), the old copy loop (LK_AM_FAST_COPY=0) against the new, twice in turn.
# (LK_AM_FAST_COPY was this call's switch; removed after it: the straight copies are the kernel's.)
# Prediction: the step at 32k / 32 splits 55 -> ~40 us a layer (2.4 -> ~3.3 TB/s); at 1 split 657 -> ~450; chunks +5-15%.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90 -DLK_AM_FAST_COPY=0 -o /tmp/ab_slow bench/attention_bench.cu &
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ab_fast bench/attention_bench.cu &
wait
for r in 1 2; do for v in slow fast; do /tmp/ab_$v > $OUT/attn-$v-$r.txt 2>&1; done; done
python3 - "$OUT" <<'PY'
import sys, collections, statistics
out = sys.argv[1]
rows = collections.OrderedDict()
for v in ["slow", "fast"]:
    for r in [1, 2]:
        for line in open(f"{out}/attn-{v}-{r}.txt"):
            f = line.split()
            if len(f) >= 6 and f[0] in ("mma", "mmafold"):
                rows.setdefault((f[0], f[1], f[2], f[3]), {}).setdefault(v, []).append((float(f[4]), f[-1]))
print("kernel rows depth splits | us slow | us fast | fast/slow speed | max diff slow fast")
for k, r in rows.items():
    s = min(x[0] for x in r["slow"]); f = min(x[0] for x in r["fast"])
    print(*k, "|", s, "|", f, "|", f"{s / f:.3f}x", "|", r["slow"][0][1], r["fast"][0][1])
PY
