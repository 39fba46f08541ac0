#!/usr/bin/env bash
# Session 48, call 7 (carry .carry): on an H200, #16's real-worker tuning of llama-3.1-8b Q4_K_M (bench/calls/
# s41_call1.sh, ~6 minutes). On an H100 (~3 minutes): the step attention's SASS for offline counting (call 6's ncu: the
# tile loop issue-bound at 2 warps a scheduler, ~340 instructions a warp a tile of 8 positions), then the 8B's decode on
# the tuner's default workload (a 512-token prompt, 128 generated) against decode after 5 tokens, the record's set
# with 1 and 16 attention splits. Prediction (H100): after 512 tokens ~400 tok/s with 16 splits (the 0.6B lost 18%
# there, the 8B's attention is a smaller share), 1 split ~5% slower.
set -u
. bench/calls/prelude.sh
. bench/common.sh
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $G"
case "$G" in
  *H200*) bash bench/calls/s41_call1.sh ;;
  *)
    /usr/local/cuda/bin/cuobjdump -sass bench/.ab_k64_s3 > /tmp/ab.sass 2>&1; wc -l /tmp/ab.sass
    xz -6 -c /tmp/ab.sass > $OUT/attention_bench.sass.xz
    F=$(TYPE=q4_k_m checkpoint $L /tmp llama-3.1-8b)
    REC=$(grep "^REC=" bench/calls/s45_sets.sh | sed "s/^REC='//; s/'$//")
    K=(--knobs-json "$REC" --knobs-json "${REC/\"attn_splits\":16/\"attn_splits\":1}")
    workload_lines wl8b "$F" 3 "512,128 5,129" "${K[@]}"
    ;;
esac
