#!/usr/bin/env bash
# Session 32, call 8 (the budget's last ~9 minutes; carry .carry: this tree's build and gemv_bench, and
# .llama/llama-bench.xz built here). (1) The fused gate/up GEMV's staged copy after call 7's fix (its reads were
# generic loads through a pointer kept in a variable, and read twice, once a matrix: the pair 20.95 us against
# bv_smx's 18.63; now LDS from the shared array, once for both): gemv_bench, then decode A/B on the 8B (A the switch
# off). Prediction: the pair ~18.7 us, B/A 1.015-1.025. (2) bench/speed.sh on llama-3.1-8b Q4_K_M side by side with
# llama-bench, the record's set, the switch as the A/B chose. Prediction: decode ~550 tok/s (session 30's record
# 529; calls 3-5's Q6_K layout +2.7%), prefill ~16,300.
set -u
GB_SHAPE=gate+up timeout 60 .carry/gb-smx "glu" > $OUT/gemv-glu.txt 2>&1
cut -c1-80 $OUT/gemv-glu.txt | grep -v base
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
KNOBS="$R" NVFLAGS_A="-DLK_GLU_SMX=0" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 | tee $OUT/ab-8b.txt | grep -E "decode A|logits|FAIL|rror" | cut -c1-200
ratio=$(grep -o '(B/A [0-9.]*)' $OUT/ab-8b.txt | head -1 | tr -d '()B/A ')
v=$(python3 -c "print(1 if float('${ratio:-0}' or 0) >= 1.0 else 0)")
echo "LK_GLU_SMX=$v for the speed run (B/A ${ratio:-?})"
printf '#!/bin/sh\nexec /usr/local/cuda/bin/nvcc -DLK_GLU_SMX=%s "$@"\n' $v > /tmp/nvcc_smx && chmod +x /tmp/nvcc_smx
LT_NVCC=/tmp/nvcc_smx TYPE=q4_k_m KNOB_SETS="$R" timeout 370 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b \
  > $OUT/speed-8b-q4km.txt 2>&1
echo "speed 8b q4_k_m rc=$?"; sed -n '/==== speed/,$p' $OUT/speed-8b-q4km.txt | cut -c1-200 | head -24
