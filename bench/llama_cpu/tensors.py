#!/usr/bin/env python3
"""Two checkpoints' tensors side by side, from `lane-tune inspect --json` of each (A_JSON B_JSON):
  types: each tensor's type in both (llama.cpp's quantize tool's choice against lane-tune's); prints the differences
         and how many of the tensors of one type are byte for byte the same (the quantizers' blocks)
  values: both files' f32 tensors compared value by value (their data read from the files); prints the worst
          difference relative to the tensor's largest magnitude, and how many tensors are bit for bit equal
  error SOURCE_JSON A_JSON B_JSON: two quantizers' files (dequantized to f32) against the f32 source they were made
          from: each one's relative L2 error over every matrix they quantized, and how many matrices each is closer on"""
import array
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def raw(meta, t):
    with open(meta["file"], "rb") as f:
        f.seek(meta["data_start"] + t["offset"])
        return f.read(t["bytes"])


def floats(meta, t):
    v = array.array("f")
    v.frombytes(raw(meta, t))
    return v


def types(a, b):
    ta = {t["name"]: t["type"] for t in a["tensors"]}
    tb = {t["name"]: t["type"] for t in b["tensors"]}
    diff = [f"{n}: {ta.get(n)} / {tb.get(n)}" for n in sorted(set(ta) | set(tb)) if ta.get(n) != tb.get(n)]
    count = {}
    for t in ta.values():
        count[t] = count.get(t, 0) + 1
    ub = {t["name"]: t for t in b["tensors"]}
    same = sum(1 for t in a["tensors"] if t["name"] in ub and ub[t["name"]]["type"] == t["type"] and
               raw(a, t) == raw(b, ub[t["name"]]))
    print("types " + ("equal" if not diff else f"differ in {len(diff)}") + " " +
          ",".join(f"{k}:{v}" for k, v in sorted(count.items())) + f"; {same} of {len(ta)} tensors byte for byte equal")
    for d in diff[:12]:
        print("  " + d)
    return not diff


def values(a, b):
    tb = {t["name"]: t for t in b["tensors"]}
    worst, equal, n = 0.0, 0, 0
    for t in a["tensors"]:
        u = tb.get(t["name"])
        if t["type"] != "f32" or not u or u["type"] != "f32":
            continue
        x, y = floats(a, t), floats(b, u)
        scale = max(abs(v) for v in x) or 1.0
        d = max(abs(p - q) for p, q in zip(x, y)) / scale
        worst, equal, n = max(worst, d), equal + (x == y), n + 1
    print(f"values: {n} tensors, {equal} bit for bit equal, worst difference {worst:.3e} of the tensor's largest")
    return n > 0


def error(src, a, b):
    ta, tb = {t["name"]: t for t in a["tensors"]}, {t["name"]: t for t in b["tensors"]}
    sums = [0.0, 0.0, 0.0]  # |a - s|^2, |b - s|^2, |s|^2
    closer = [0, 0]
    for t in src["tensors"]:
        u, w = ta.get(t["name"]), tb.get(t["name"])
        if t["type"] != "f32" or not u or not w or u["type"] != "f32" or w["type"] != "f32":
            continue
        s, x, y = floats(src, t), floats(a, u), floats(b, w)
        if s == x:
            continue  # (not quantized)
        ex = sum((p - q) ** 2 for p, q in zip(x, s))
        ey = sum((p - q) ** 2 for p, q in zip(y, s))
        sums[0] += ex
        sums[1] += ey
        sums[2] += sum(q * q for q in s)
        closer[0 if ex < ey else 1] += ex != ey
    n = sums[2] or 1.0
    print(f"error: llama.cpp {(sums[0] / n) ** 0.5:.4e} lane-tune {(sums[1] / n) ** 0.5:.4e} "
          f"(matrices closer: {closer[0]} / {closer[1]})")
    return True


if __name__ == "__main__":
    if sys.argv[1] == "error":
        ok = error(load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4]))
    else:
        ok = (types if sys.argv[1] == "types" else values)(load(sys.argv[2]), load(sys.argv[3]))
    sys.exit(0 if ok else 1)
