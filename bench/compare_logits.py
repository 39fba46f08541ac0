#!/usr/bin/env python3
"""Compares a lane's logits and tokens with the CPU reference's: relative L2 error, arg-max agreement, max abs error.

usage: compare_logits.py REF.bin OUT.bin VOCAB [--tol X] [--ref-tokens F --out-tokens F] [--min-agree A] [--tie T]
Prints one line `COMPARE: rel_l2=... agree=... max_abs=... tokens=equal|differ verdict=ok|FAIL` and exits 1 on FAIL.

With --tie T (the lossy numerics) and both token files, a prompt's generation may flip a near tie: at its first
token that differs, the reference's logits must put the lane's token within T times the row's RMS of its own; the
rows after it (another context) are left out of the comparison (the worker's rule, worker/src/checks.cpp).
"""
import argparse
import sys

import numpy as np


def tokens(path):
    return [l.split()[1:] for l in open(path) if l.startswith("TOKENS:")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("out")
    ap.add_argument("vocab", type=int)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--min-agree", type=float, default=1.0)
    ap.add_argument("--ref-tokens")
    ap.add_argument("--out-tokens")
    ap.add_argument("--tie", type=float, default=0.0)
    a = ap.parse_args()
    r = np.fromfile(a.ref, dtype="<f4").astype(np.float64)
    o = np.fromfile(a.out, dtype="<f4").astype(np.float64)
    if r.size != o.size or r.size % a.vocab:
        print(f"COMPARE: sizes differ ref={r.size} out={o.size} verdict=FAIL")
        return 1
    r = r.reshape(-1, a.vocab)
    o = o.reshape(-1, a.vocab)
    same_tokens, ties, far = True, 0, False
    if a.ref_tokens and a.out_tokens:
        rt, ot = tokens(a.ref_tokens), tokens(a.out_tokens)
        same_tokens = rt == ot
        if not same_tokens and len(rt) == len(ot) and sum(map(len, rt)) == len(r):
            keep, at = [], 0
            for want, got in zip(rt, ot):
                n = len(want)
                upto = n
                for i in range(n):
                    if i < len(got) and got[i] == want[i]:
                        continue
                    row = r[at + i]
                    rms = float(np.sqrt((row ** 2).mean()))
                    gap = float(row[int(want[i])] - row[int(got[i])]) if i < len(got) else float("inf")
                    if a.tie > 0 and gap <= a.tie * rms:
                        ties += 1
                    else:
                        far = True
                    upto = i + 1
                    break
                keep.extend(range(at, at + upto))
                at += n
            r, o = r[keep], o[keep]
        else:
            far = not same_tokens
    finite = bool(np.isfinite(o).all())
    rel = float(np.linalg.norm(o - r) / np.linalg.norm(r))
    worst = float(max(np.linalg.norm(o[i] - r[i]) / np.linalg.norm(r[i]) for i in range(len(r))))
    # (a near tie's row counts as agreeing, as the worker counts it: its flip is the one the tie rule allowed)
    agree = min(1.0, float((o.argmax(1) == r.argmax(1)).mean()) + ties / max(len(r), 1))
    max_abs = float(np.abs(o - r).max())
    ok = finite and rel <= a.tol and agree >= a.min_agree and not far
    print(f"COMPARE: rows={len(r)} rel_l2={rel:.3e} worst_row={worst:.3e} agree={agree:.4f} max_abs={max_abs:.3e} "
          f"finite={finite} tokens={'equal' if same_tokens else f'near_ties={ties}' if not far else 'differ'} "
          f"verdict={'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
