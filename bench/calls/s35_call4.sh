#!/usr/bin/env bash
# Session 35, call 4 (~9 minutes; carry .carry = this tree with norm blocks of 256 threads up to d 4,096, .carry-old =
# 77e88c8's build, 512 threads). Hypothesis: the 8B's add_norm (64 x 3.90 us a step against the 0.6B's 1.55 at the same
# chain) is late because its block cannot become resident beside the GEMV before it: a Q4_K GEMV of 4,096 rows fills
# 512 of the 528 slots of 4 blocks an SM (~16K registers each), and a norm block of 512 threads (~40 registers) does
# not fit a free slot, so it launches only as the GEMV's blocks retire instead of waiting at its PDL wait; the 0.6B's
# (256 threads, GEMVs of 128 blocks) waits resident. (1) Decode A/B on llama-3.1-8b Q4_K_M, the record's set, A the old
# build, B this one (the norm's sums in another order: logits not bitwise equal, near). Prediction: add_norm ~3.9 ->
# ~2.5 us, decode +3-5% (553 -> ~575); prefill(512) unchanged. (2) The tuning job (bench/tune_h200.sh, 3 minutes) with
# the build that won, if the time holds it, else bench/shapes.sh's random shapes.
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
KNOBS="$R" TYPE=q4_k_m PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 200 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab-n llama-3.1-8b > $OUT/ab-norm.txt 2>&1
grep -E "decode A|prefill|logits|FAIL|rror" $OUT/ab-norm.txt | cut -c1-200
LT=$L
python3 - $OUT/ab-norm.txt <<'PY' || LT=/tmp/o/lane-tune
import re, sys
r = [float(m.group(1)) for m in re.finditer(r"decode A .* \(B/A ([0-9.]+)\)", open(sys.argv[1]).read())]
sys.exit(0 if r and r[0] > 1.0 else 1)
PY
# The B lane's step profile (the norm's time): one --profile run of its decode.
D=/tmp/ab-n/llama-3.1-8b.ab-b
[ -x $D/lane ] && $D/lane /tmp/ab-n/llama-3.1-8b-q4_k_m.gguf $D/lane.sidecar 64 1 2 3 4 5 --profile 2>&1 | grep -E "^PROFILE: add_norm|PROFILE_TOTAL" | awk '{n[$2]++; s[$2]+=$NF} END {for (k in n) print k, n[k], s[k]}' | head
left=$((${LIMIT:-560} - ($(date +%s) - T0)))
echo "tuning with $LT; $left s left"
if [ "$left" -gt 330 ]; then
  TYPE=q4_k_m timeout $((left - 10)) bash bench/tune_h200.sh $LT /tmp/tj llama-3.1-8b 3m > $OUT/tune.txt 2>&1
  echo "tune rc=$?"; tail -20 $OUT/tune.txt | cut -c1-400
  cp /tmp/tj/job/progress.txt /tmp/tj/job/best.txt $OUT/ 2> /dev/null
  xz -9c /tmp/tj/job/results.json > $OUT/results.json.xz 2> /dev/null
elif [ "$left" -gt 90 ]; then
  timeout $((left - 5)) bash bench/shapes.sh $L /tmp/shp 6 3 > $OUT/shapes.log 2>&1
  echo "shapes rc=$?"; grep -E "^====|verdict|FAIL|DIFFERS" $OUT/shapes.log | grep -v "^==== sweep" | cut -c1-160 | head -30
fi
