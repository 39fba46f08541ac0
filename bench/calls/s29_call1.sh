#!/usr/bin/env bash
# Session 29, call 1 (~6 minutes; carry .carry: this tree's build).
# (Its timeline steps, written inline when it ran, are bench/timeline.sh's since.)
# 1. fuse_qkv_mixed (session 28's knob, not yet measured): verified on qwen3-0.6b Q4_K_M (the mix keeps half the
#    layers' v in Q6_K), prompts 5 and 130.
# 2. Decode A/B, the record's set without and with it, 2 rounds: qwen3-0.6b (gemv_short, pdl_first) and the 8B.
#    Prediction: 0.6B +3-4% (14 launch boundaries of ~2 us less a step of ~535 us); 8B +1-2% (16 of ~3 us of 1,950);
#    logits bitwise equal (the same sums a row) unless the Q6_K rows' order of blocks changes a sum: it does not.
# 3. One decode step's timeline with marks inside the step attention (kernels/prelude.cuh's LK_TL_MARK: 1 after the
#    wait, 2 after the rope and the queries' fragments, 3 after the tiles, 4 after the merge, 5 after the int8 copy),
#    both models, the sets with fuse_qkv_mixed. The question (#18): where the attention's ~4.8 us a layer (session 28's
#    ablation) goes after its release. Prediction: rope ~0.8-1 us (an L2 round trip for q/k/v), tiles ~1 us, merge and
#    copy ~0.5 us; the rest (~2 us) between its last mark and the o GEMV's release (the stores' drain and the launch's
#    completion).
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
. bench/common.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
S=${R/\"pdl\":true/\"pdl\":true,\"gemv_short\":true,\"pdl_first\":true}
MIX='"fuse_qkv":true,"fuse_qkv_mixed":true'
SM=${S/\"fuse_qkv\":true/$MIX}; RM=${R/\"fuse_qkv\":true/$MIX}
echo "== 1. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130" 150 "$SM"
echo "== 2. A/B"
for run in "qwen3-0.6b $S $SM" "llama-3.1-8b $R $RM"; do
  read -r P K KM <<< "$run"
  KNOBS_A="$K" KNOBS="$KM" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5" ROUNDS=2 \
    timeout 170 bash bench/ab_decode.sh $L $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep -E "decode A|tokens|FAIL" |
    cut -c1-200
done
echo "== 3. timeline"
KNOBS="$SM" bash bench/timeline.sh $L /tmp/ab $OUT qwen3-0.6b
KNOBS="$RM" bash bench/timeline.sh $L /tmp/ab $OUT llama-3.1-8b
xz -9 $OUT/tl-*.txt
