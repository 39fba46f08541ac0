# One configuration's figures from `lane-tune measure --json` output: decode ms, prefill ms, logits hash, valid, the
# resident request's seconds.  usage: resident_row.py FILE LINE
import json
import sys

r = json.loads(open(sys.argv[1]).read().strip().splitlines()[int(sys.argv[2]) - 1])
print("%.4f %.4f %s %d %.2f" % (r["decode_ms"], r["prefill_ms"], r["logits_hash"] or "-", r["valid"], r["cost"].get("run_s", 0)))
