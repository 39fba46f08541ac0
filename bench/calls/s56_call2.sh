#!/usr/bin/env bash
# Session 56, call 2 (prepared, not run: refused starts spent the budget; ~3.5 minutes on any GPU; carry .carry):
# the norms' early trigger (LK_PDL_FIRST=4: the add_norm launches let the next one start before their wait) where pdl
# is on and pdl_first off, the only lanes it changes: +0.6% and +0.8% on the 8B Q4_K_M under T8 in session 56's calls
# 1 and 3 (H100). Whether to make it the lanes' own rule under pdl rather than a knob asks whether it loses anywhere:
# the 0.6B Q4_K_M under R06S with pdl_first off, the 8B Q8_0 under Q8 (s45_sets.sh). S56_RUNS picks runs ("PRESET TYPE
# SET", comma-separated). Prediction: 8B Q8_0 +0.3-1%; the 0.6B's -1 to +1% (a step of ~240 launches of ~2 us: the
# early GEMV blocks wait beside the norm's one block); logits bitwise equal.
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
R06N=${R06S/\"pdl_first\":true/\"pdl_first\":false}
RUNS=${S56_RUNS:-"qwen3-0.6b q4_k_m R06N,llama-3.1-8b q8_0 Q8"}  # (the 0.6B first: the one that may lose)
IFS=, read -ra RUNS <<< "$RUNS"
for run in "${RUNS[@]}"; do
  read -r P T S <<< "$run"
  echo "== $P $T $S"
  KNOBS="${!S}" NVFLAGS_B=-DLK_PDL_FIRST=4 TYPE=$T ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
    timeout 170 bash bench/ab_decode.sh $L $L /tmp/ab-$T $P 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
done
