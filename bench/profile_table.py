#!/usr/bin/env python3
"""A lane's --profile output as a table by kind of launch: the decode step's launches, or the largest prefill chunk's.

usage: profile_table.py PROFILE_OUTPUT PRESET decode|prefill LANE_JSON
"""
import collections
import json
import sys


def main():
    path, preset, which, lane_json = sys.argv[1:5]
    knobs = json.dumps(json.load(open(lane_json))["knobs"], separators=(",", ":"))
    lines = [l.split() for l in open(path)]
    if which == "decode":
        rows = [(r[1] + (" (logits)" if r[2] == "logits" else ""), float(r[3])) for r in lines if r and r[0] == "PROFILE:"]
        what = "a decode step"
    else:
        chunks = [r for r in lines if r and r[0] == "PROFILE_CHUNK:"]
        big = max((int(r[1]) for r in chunks), default=0)
        rows = [(r[2] + (" (logits)" if r[3] == "logits" else ""), float(r[4])) for r in chunks if int(r[1]) == big]
        what = f"a prefill chunk of {big} rows"
    total = sum(us for _, us in rows)
    by = collections.defaultdict(lambda: [0, 0.0])
    for k, us in rows:
        by[k][0] += 1
        by[k][1] += us
    timing = [l[1] for l in lines if l and l[0] == "PROFILE_TIMING:"]
    print(f"{preset}: profile of the fastest valid {which} {knobs} ({timing[0] if timing else '?'} timing): "
          f"{len(rows)} launches, {total:.0f} us {what}")
    for k, (n, us) in sorted(by.items(), key=lambda x: -x[1][1]):
        print(f"  {k:22s} {n:4d} launches {us:9.1f} us {100 * us / max(total, 1e-9):5.1f}%  {us / n:7.2f} us each")


if __name__ == "__main__":
    main()
