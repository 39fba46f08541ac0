#!/usr/bin/env bash
# Session 54: ncu over one decode step of the 8B Q4_K_M lane (T8, session 50's tuned H200 set), every launch profiled
# alone (ncu serializes them: no PDL overlap, L2 flushed before each), grouped by kernel: time, DRAM bytes and rate,
# registers, warps an SM, issue rate and the long-scoreboard stall (cycles a warp waits on memory per instruction).
# What the launched profile cannot say: each kernel's own cost without its neighbour's tail (add_norm's 5.5 us a
# launch in `measure --profile` carries the GEMV before it). Prediction (H100): add_norm alone ~2 us, attention at
# depth ~70 ~4 us, the Q4_K GEMVs 60-70% of DRAM's peak, the Q6_K ones and the logits ~85-90%.
# Carry .carry. ~4 minutes (the 8B's synth ~1.5 of them).
set -u
. bench/calls/prelude.sh
. bench/common.sh
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
mkdir -p /tmp/ab
F=$(TYPE=q4_k_m checkpoint $L /tmp/ab llama-3.1-8b)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,launch__registers_per_thread,sm__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active
M=$M,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,launch__grid_size,launch__block_size
$L measure $F --knobs-json "$T8" --workload 5,8 --repeat 1 --warmup 0 --cache /tmp/ab/c-ncu > /dev/null 2>&1  # (build)
timeout ${NCU_S:-300} ncu --kernel-name-base demangled -k 'regex:^(?!.*double).*$' --launch-skip ${SKIP:-1000} \
  --launch-count ${COUNT:-400} --csv --page raw --metrics $M \
  $L measure $F --knobs-json "$T8" --workload 5,64 --repeat 1 --warmup 0 --cache /tmp/ab/c-ncu \
  > $OUT/ncu_lane.csv 2> $OUT/ncu_lane.err
echo "ncu rc=$?"; tail -3 $OUT/ncu_lane.err
python3 - $OUT/ncu_lane.csv <<'PY' | tee $OUT/ncu_lane.txt
import csv, sys, collections, statistics as st
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = list(csv.reader(rows)); h = r[0]; i = {k: j for j, k in enumerate(h)}
num = lambda x, k: float(x[i[k]].replace(',', '') or 0)
by = collections.defaultdict(list)
for x in r[2:]:
    name = x[i['Kernel Name']].split('(')[0].replace('void ', '')[:58]
    by[(name, x[i['launch__grid_size']], x[i['launch__block_size']])].append(x)
heads = ('grid', 7), ('blk', 4), ('n', 4), ('us', 7), ('MB', 7), ('TB/s', 5), ('dram%', 5), ('reg', 4), ('warps', 5), \
    ('iss', 4), ('lsb', 5)
print(f"{'kernel':58s} " + " ".join(f"{h:>{w}s}" for h, w in heads))
tot = 0.0
for k, v in sorted(by.items(), key=lambda e: -sum(num(x, 'gpu__time_duration.sum') for x in e[1])):
    t = st.median(num(x, 'gpu__time_duration.sum') for x in v) / 1e3
    b = st.median(num(x, 'dram__bytes_read.sum') for x in v)
    tot += sum(num(x, 'gpu__time_duration.sum') for x in v) / 1e3
    g = lambda m: st.median(num(x, m) for x in v)
    dram, regs = g('dram__throughput.avg.pct_of_peak_sustained_elapsed'), g('launch__registers_per_thread')
    warps, issue = g('sm__warps_active.avg.per_cycle_active'), g('smsp__issue_active.avg.per_cycle_active')
    lsb = g('smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio')
    print(f"{k[0]:58s} {k[1]:>7s} {k[2]:>4s} {len(v):4d} {t:7.2f} {b/1e6:7.2f} {b/1e6/t:5.2f} {dram:5.1f} "
          f"{regs:4.0f} {warps:5.1f} {issue:4.2f} {lsb:5.2f}")
print(f"{len(r) - 2} launches, {tot:.0f} us in all")
PY
