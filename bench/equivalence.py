#!/usr/bin/env python3
"""Two lane-tune builds' lanes side by side: the same checkpoints and knobs compiled by each, built with nvcc, run on
this GPU over the same prompts; their tokens and logits must be bit for bit the same. It proves that a change of the
compiler's structure changed no lane's numbers (#15), over configurations that together take every value of every
knob the OLD build knows, on every dense tiny preset, and reports each build's nvcc times.

The configurations: for each (knob, value) not yet covered, random configurations with that value until one that both
builds accept (a deterministic seed); each accepted one covers all of its pairs.

usage: bench/equivalence.py OLD_LANE_TUNE NEW_LANE_TUNE WORKDIR [--presets P,...] [--jobs N] [--big PRESET]
Prints a line per lane pair, then a summary table; writes WORKDIR/equivalence.json.
"""
import argparse
import concurrent.futures as cf
import json
import os
import random
import statistics
import subprocess
import sys
import time


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def knob_domains(lt, gguf):
    out = run([lt, "knobs", gguf, "--json"])
    if out.returncode:
        sys.exit(f"{lt} knobs: {out.stderr}")
    return {k["name"]: k["values"] for k in json.loads(out.stdout)["knobs"]}


def compiles(lt, gguf, knobs, out_dir, work):
    path = os.path.join(work, f"k{os.getpid()}_{random.random():.9f}.json")
    with open(path, "w") as f:
        json.dump(knobs, f)
    r = run([lt, "compile", gguf, "--knobs", path, "-o", out_dir])
    os.remove(path)
    return r.returncode == 0


def choose_configs(old, new, gguf, domains, work, seed):
    """Configurations that together take every (knob, value) of `domains`, each accepted by both builds."""
    rng = random.Random(seed)
    todo = [(k, json.dumps(v)) for k, vals in domains.items() for v in vals]
    covered, configs = set(), []
    scratch = os.path.join(work, "scratch")
    for k, v in todo:
        if (k, v) in covered:
            continue
        for _ in range(400):
            c = {name: rng.choice(vals) for name, vals in domains.items()}
            c[k] = json.loads(v)
            if compiles(old, gguf, c, scratch, work) and compiles(new, gguf, c, scratch, work):
                configs.append(c)
                covered |= {(name, json.dumps(val)) for name, val in c.items()}
                break
        else:
            print(f"no configuration with {k}={v} found that both builds accept", flush=True)
    return configs, len(covered), len(todo)


def build(lt, lane_dir):
    t = time.monotonic()
    r = run([lt, "build", lane_dir, "--arch", "sm_90"])
    return r.returncode, time.monotonic() - t, r.stderr[-400:]


def lane_output(lane_dir, gguf, prompts, extra=()):
    logits = os.path.join(lane_dir, "out.bin")
    r = run([os.path.join(lane_dir, "lane"), gguf, os.path.join(lane_dir, "lane.sidecar"), "--prompts", prompts,
             "--logits", logits, *extra])
    tokens = [l for l in r.stdout.splitlines() if l.startswith("TOKENS:")]
    data = open(logits, "rb").read() if os.path.exists(logits) else b""
    return r.returncode, tokens, data, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("work")
    ap.add_argument("--presets", default="tiny-llama,tiny-qwen2,tiny-qwen3")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--big", default="", help="a larger preset whose default lane each build builds alone, twice")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows, builds = [], {"old": [], "new": []}
    runtime_built = False
    for preset in a.presets.split(","):
        gguf = os.path.join(a.work, preset + ".gguf")
        if not os.path.exists(gguf):
            run([a.new, "synth", "--preset", preset, "--type", "q8_0", "--seed", "1", "-o", gguf, "-q"], check=True)
        old_d, new_d = knob_domains(a.old, gguf), knob_domains(a.new, gguf)
        domains = {k: v for k, v in old_d.items() if k in new_d}
        configs, got, want = choose_configs(a.old, a.new, gguf, domains, a.work, a.seed)
        print(f"{preset}: {len(configs)} configurations cover {got} of {want} (knob, value) pairs of the old space;"
              f" knobs only the new build has: {sorted(set(new_d) - set(old_d))}", flush=True)
        dirs = []
        for i, c in enumerate(configs):
            for side, lt in (("old", a.old), ("new", a.new)):
                d = os.path.join(a.work, f"{preset}.{i}.{side}")
                assert compiles(lt, gguf, c, d, a.work)
                dirs.append((side, lt, d))
        prompts = os.path.join(a.work, preset + ".prompts")
        vocab = json.load(open(os.path.join(dirs[0][2], "lane.json")))["vocab"]
        r = random.Random(7)
        with open(prompts, "w") as f:
            for n in (5, 23, 300):
                f.write("8 " + " ".join(str(r.randrange(vocab)) for _ in range(n)) + "\n")
        if not runtime_built:
            # A lane links a host runtime compiled once per machine (lane_host.cu, since session 9): built here by one
            # lane of each side first, untimed, so that the timed builds below compare what a lane costs.
            for side, lt, d in dirs[:2]:
                rc, secs, err = build(lt, d)
                print(f"{side}: the first lane (with its runtime, where it has one) built alone in {secs:.1f} s",
                      flush=True)
            runtime_built = True
        with cf.ThreadPoolExecutor(a.jobs) as pool:
            done = list(pool.map(lambda x: (x[0], x[2], *build(x[1], x[2])), dirs))
        for side, d, rc, secs, err in done:
            builds[side].append(secs)
            if rc:
                print(f"BUILD_FAIL {d}: {err}", flush=True)
        for i, c in enumerate(configs):
            o = lane_output(os.path.join(a.work, f"{preset}.{i}.old"), gguf, prompts)
            n = lane_output(os.path.join(a.work, f"{preset}.{i}.new"), gguf, prompts)
            same = o[0] == 0 and n[0] == 0 and o[1] == n[1] and o[2] == n[2] and len(o[2]) > 0
            row = {"preset": preset, "config": c, "rc_old": o[0], "rc_new": n[0], "tokens_same": o[1] == n[1],
                   "logits_same": o[2] == n[2], "logits_bytes": len(n[2]), "equivalent": same}
            # The new build's --profile (its clocks) must time the same run: its tokens and logits unchanged, a
            # PROFILE_TOTAL_US line, and the same timing method as the old build's.
            po = lane_output(os.path.join(a.work, f"{preset}.{i}.old"), gguf, prompts, ["--profile"])
            pn = lane_output(os.path.join(a.work, f"{preset}.{i}.new"), gguf, prompts, ["--profile"])
            timing = lambda out: [l.split()[1] for l in out.splitlines() if l.startswith("PROFILE_TIMING:")]
            row["profile_same"] = (pn[0] == 0 and pn[1] == n[1] and pn[2] == n[2] and
                                   "PROFILE_TOTAL_US:" in pn[3] and timing(pn[3]) == timing(po[3]))
            row["profile_timing"] = timing(pn[3])
            rows.append(row)
            print(("EQUIVALENT " if same else "DIFFERS    ") + ("profile-ok " if row["profile_same"] else "PROFILE-BAD ")
                  + f"{preset} {json.dumps(c, sort_keys=True)}", flush=True)
    big = {}
    if a.big:
        gguf = os.path.join(a.work, a.big + ".gguf")
        if not os.path.exists(gguf):
            run([a.new, "synth", "--preset", a.big, "--type", "q8_0", "--seed", "1", "-o", gguf, "-q"], check=True)
        for rep in range(2):
            for side, lt in (("old", a.old), ("new", a.new)):
                d = os.path.join(a.work, f"{a.big}.{side}")
                assert compiles(lt, gguf, {}, d, a.work)
                rc, secs, err = build(lt, d)
                big.setdefault(side, []).append(round(secs, 1))
    ok = sum(r["equivalent"] for r in rows)
    prof = sum(r["profile_same"] for r in rows)
    print(f"\nlane pairs: {len(rows)}, bit-equal tokens and logits: {ok}, --profile consistent: {prof}")
    for side in ("old", "new"):
        b = builds[side]
        if b:
            print(f"nvcc, {side}: {len(b)} tiny lanes built {a.jobs} at a time, median {statistics.median(b):.1f} s,"
                  f" total {sum(b):.0f} s" + (f"; {a.big} alone: {big.get(side)} s" if big else ""))
    json.dump({"rows": rows, "builds": builds, "big": big}, open(os.path.join(a.work, "equivalence.json"), "w"),
              indent=1)
    return 0 if ok == len(rows) and prof == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
