#!/usr/bin/env python3
"""Logits rows (f32, little-endian) of lane-tune's CPU reference against llama.cpp's on the same tokens: each row's
relative L2 distance (|a - b| / |a|) and whether its arg-max agrees. Prints one line: rows, the worst and median rel
L2, the arg-max agreement. The standard library only (no numpy on the build machine)."""
import array
import math
import sys


def rows(path, vocab):
    a = array.array("f")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    if len(a) % vocab:
        sys.exit(f"{path}: {len(a)} values are not whole rows of {vocab}")
    return [a[i : i + vocab] for i in range(0, len(a), vocab)]


def main():
    ref_path, ll_path, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ref, ll = rows(ref_path, vocab), rows(ll_path, vocab)
    if len(ref) != len(ll):
        sys.exit(f"{len(ref)} rows against {len(ll)}")
    rel, agree = [], 0
    for a, b in zip(ref, ll):
        num = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
        den = math.sqrt(sum(x * x for x in a)) or 1.0
        rel.append(num / den)
        agree += max(range(vocab), key=a.__getitem__) == max(range(vocab), key=b.__getitem__)
    rel_sorted = sorted(rel)
    print(f"rows={len(rel)} rel_l2_max={max(rel):.3e} rel_l2_median={rel_sorted[len(rel) // 2]:.3e} "
          f"argmax={agree}/{len(rel)}")


if __name__ == "__main__":
    main()
