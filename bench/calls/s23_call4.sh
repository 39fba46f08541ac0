#!/usr/bin/env bash
# Session 23, call 4 (~8 minutes; carry .carry = this tree, .llama/llama-bench.xz):
# (1) What holds the decode step's attention at ~6-8 us a layer on the 0.6B (call 1 and 3's profiles) when its tiles
#     asked early (call 2: no change) and its splits (session 21) are not: the SMs' shared-memory carveout. The lane's
#     kernels but attention take no shared memory, so each attention launch may wait for its SMs to be reconfigured
#     (drained of the GEMV before it). LK_CARVEOUT=percent (a measurement switch of the emitted program) sets every
#     kernel's preferred carveout: unset / 100 / 50, decode 128 tokens after 5, alternating, 3 rounds, both models.
#     Prediction: 100 gives the 0.6B +5-15% and the 8B +2-5% if the reconfiguration is the cost; else within 1%.
# (2) The record side by side with llama-bench (bench/speed.sh; checked against the reference first), the record's
#     knobs with attn_rope. Prediction: 8B ~482 tok/s (call 3), 0.6B ~1,490-1,500.
set -u
. bench/calls/prelude.sh
. bench/common.sh 2>/dev/null
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1,"attn_rope":true}'
W=/tmp/cv; mkdir -p $W; echo "$B" > $W/k.json; : > $W/dirs
for P in qwen3-0.6b llama-3.1-8b; do
  F=$(TYPE=q4_k_m checkpoint $L $W $P)
  $L compile $F --knobs $W/k.json -o $W/$P > /dev/null && echo $W/$P >> $W/dirs
done
build_all $L $W/dirs
for P in qwen3-0.6b llama-3.1-8b; do
  F=$(TYPE=q4_k_m checkpoint $L $W $P); D=$W/$P; T=$(tokens "$(vocab $D)" 5 7)
  declare -A r=()
  for round in 1 2 3; do
    for c in none 100 50; do
      if [ $c = none ]; then v=$($D/lane $F $D/lane.sidecar 128 $T 2>/dev/null | awk '/DECODE_TOK_PER_S/ {print $2}')
      else v=$(LK_CARVEOUT=$c $D/lane $F $D/lane.sidecar 128 $T 2>/dev/null | awk '/DECODE_TOK_PER_S/ {print $2}'); fi
      r[$c]+=" $v"
    done
  done
  for c in none 100 50; do echo "carveout $P $c: ${r[$c]}"; done | tee -a $OUT/carveout.txt
  unset r
done
. bench/calls/llama_prelude.sh
TYPE=q4_k_m KNOB_SETS="${B}" timeout 330 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b qwen3-0.6b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; sed -n '/==== speed/,$p' $OUT/speed.txt | cut -c1-230 | tail -30
