#!/usr/bin/env bash
# Session 35: session 33's s33_call3 and s33_call4 in one call (failed starts cost ~70 s of the session's device time
# each, and every call a cold start): gemv_pipe's decode A/B/C on llama-3.1-8b Q4_K_M (A the record's set, B + gemv_pipe
# 1, C + gemv_pipe 2; logits compared bit for bit with A's), then bench/speed.sh side by side with llama-bench with the
# value that won by more than 0.5% (or the record's set again), which checks its lane against the CPU reference
# (tokens, logits, --stagger) before it times it. Carry .carry and .llama (bench/runs moved aside: 64 MiB).
# Prediction (session 33): B +2-4% (o, the Q4_K downs, the gate/up pair pipelined), logits bitwise equal; speed.sh's
# decode the record's 551 times that ratio, prefill ~16,300 (gemv_pipe changes the decode step only).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
p() { echo "${1%\}},\"gemv_pipe\":$2}"; }
KNOBS_A="$R" KNOBS="$(p "$R" 1)" KNOBS_C="$(p "$R" 2)" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  ROUNDS=3 timeout 200 bash bench/ab_decode.sh $L $L /tmp/ab-8b llama-3.1-8b > $OUT/ab-8b.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-8b.txt | cut -c1-200
PIPE=$(python3 - $OUT/ab-8b.txt <<'PY'
import re, sys
best, val = 1.005, 0
for line in open(sys.argv[1]):
    m = re.search(r"decode A .* \((B|C)/A ([0-9.]+)\)", line)
    if m and float(m.group(2)) > best:
        best, val = float(m.group(2)), {"B": 1, "C": 2}[m.group(1)]
print(val)
PY
)
grep -q "DIFFER\|FAIL" $OUT/ab-8b.txt && PIPE=0
[ "$PIPE" != 0 ] && R=$(p "$R" $PIPE)
echo "gemv_pipe chosen: $PIPE; knobs: $R"
mkdir -p /tmp/s && ln -f /tmp/ab-8b/llama-3.1-8b-q4_k_m.gguf /tmp/s/ 2> /dev/null
TYPE=q4_k_m KNOB_SETS="$R" timeout 370 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b \
  > $OUT/speed-8b-q4km.txt 2>&1
echo "speed 8b q4_k_m rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-8b-q4km.txt | cut -c1-200 | head -24
