#!/usr/bin/env python3
"""One decode step's timeline from a lane built with -DLK_TIMELINE=1 (kernels/prelude.cuh) and run with
LK_TIMELINE_FILE set: each block's stamps before and after its first PDL wait. A launch's blocks all start before any
block of the next one (a launch lets the next start only once each of its blocks has), so the blocks sorted by their
first stamp fall into the step's launches in order (but for a GEMV's, stamped after its first weights: below); the
lane's lane.cu names them (its step1_* functions' launches).

Prints, a launch a line: its index and kernel, its blocks, when its first block started and when the first and last
of them passed the wait (us from the step's start), and its span: from its first release to the next launch's first
release (the launch's own time, its tail included, and the next one's release latency). Then the spans summed by
kernel; then, where kernels carry LK_TL_MARK(k) marks, each mark's offset from its launch's first release (the mean and
the latest over the launch's blocks, averaged over the launches of that kernel). usage: bench/timeline.py RECORDS
LANE_DIR"""
import re
import sys
from collections import defaultdict


def launches_of(lane_cu):
    names, on = [], False
    for line in open(lane_cu):
        if line.startswith("static void step1_"):
            on = True
        elif line.startswith("static void step") or line.startswith("int main"):
            on = False
        elif on:
            m = re.search(r"lk_launch\(([A-Za-z_0-9]+)", line) or re.search(r"^\s+([A-Za-z_0-9]+)(<.*?>)?<<<", line)
            if m:
                names.append(m.group(1))
    return names


def main():
    try:
        rows = [tuple(int(v) for v in l.split()) for l in open(sys.argv[1]) if l.strip()]
    except OSError as e:
        sys.exit(f"timeline.py: no records ({e.strerror}: {sys.argv[1]}); did the lane run with LK_TIMELINE_FILE set?")
    rows = [r for r in rows if r[2] != 0]  # (a kernel's mark slots never marked)
    recs = sorted(r[:5] for r in rows if len(r) < 6 or r[5] == 0)
    marks = sorted((r[0], r[2], r[5]) for r in rows if len(r) >= 6 and r[5] != 0)
    names = launches_of(sys.argv[2] + "/lane.cu")
    # (a GEMV stamps after its first round of weights, so a late block of one launch may stamp after the next launch's
    # first blocks: a record joins the latest of the last three launches with its block count that lacks its index)
    groups = []
    for r in recs:
        t0, t1, blocks, block, sm = r
        cur = next((g for g in reversed(groups[-3:])
                    if g["blocks"] == blocks and block not in g["seen"] and len(g["seen"]) < blocks), None)
        if cur is None:
            cur = {"blocks": blocks, "t0": [], "t1": [], "sms": set(), "seen": set()}
            groups.append(cur)
        cur["seen"].add(block)
        cur["t0"].append(t0)
        cur["t1"].append(t1)
        cur["sms"].add(sm)
    if not groups:
        print("no records")
        return
    base = min(g["t0"][0] for g in groups)
    us = lambda t: (t - base) / 1000.0
    print(f"{len(groups)} launches recorded, {len(names)} named in lane.cu's decode step"
          + ("" if len(groups) == len(names) else " (the counts differ: names are by position)"))
    print(f"{'#':>4} {'kernel':<24} {'blocks':>6} {'start':>9} {'release':>9} {'last rel':>9} {'span':>8}")
    by = defaultdict(lambda: [0, 0.0])
    for i, g in enumerate(groups):
        rel = min(g["t1"])
        nxt = min(groups[i + 1]["t1"]) if i + 1 < len(groups) else max(g["t1"])
        span = (nxt - rel) / 1000.0
        name = names[i] if i < len(names) else "?"
        by[name][0] += 1
        by[name][1] += span
        print(f"{i:>4} {name:<24} {g['blocks']:>6} {us(min(g['t0'])):>9.2f} {us(rel):>9.2f} {us(max(g['t1'])):>9.2f} "
              f"{span:>8.2f}")
    total = sum(v[1] for v in by.values())
    print(f"step (first release to last): {total:.1f} us")
    for name, (n, t) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f"  {name:<24} {n:>4} launches {t:>9.1f} us {100 * t / total:5.1f}%  {t / n:7.2f} us each")
    if not marks:
        return
    # A mark belongs to the latest launch with its block count released at or before it.
    at = defaultdict(list)  # (launch index, mark) -> offsets (us)
    for t, blocks, k in marks:
        i = max((j for j, g in enumerate(groups) if g["blocks"] == blocks and min(g["t1"]) <= t), default=None)
        if i is not None:
            at[(i, k)].append((t - min(groups[i]["t1"])) / 1000.0)
    kinds = defaultdict(lambda: defaultdict(list))  # kernel -> mark -> [(mean, latest)]
    for (i, k), offs in at.items():
        kinds[names[i] if i < len(names) else "?"][k].append((sum(offs) / len(offs), max(offs)))
    print("marks (us from the launch's first release: mean over its blocks / latest block, averaged over launches):")
    for name, ks in kinds.items():
        nexts = [(min(groups[i + 1]["t1"]) - min(groups[i]["t1"])) / 1000.0 for i in range(len(groups) - 1)
                 if (names[i] if i < len(names) else "?") == name]
        line = "  ".join(f"{k}: {sum(m for m, _ in v) / len(v):.2f}/{sum(x for _, x in v) / len(v):.2f}"
                         for k, v in sorted(ks.items()))
        print(f"  {name:<24} {line}  next release: {sum(nexts) / max(1, len(nexts)):.2f}")


if __name__ == "__main__":
    main()
