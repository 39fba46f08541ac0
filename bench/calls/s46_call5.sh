#!/usr/bin/env bash
# Session 46, call 5, never run (~7 minutes; carry .carry-old (71406d5's build, A), .carry (the tree's, B: the fused
# gate/up GEMM and the long-row GEMMs of a chunk of 512 on lk_gemm_w in tiles of 256 activation rows by 64 of k, call
# 4's bench; the gate/up GEMM storing only its f16 copy) and .carry-exp (C: B's GEMM shapes, not its f16-only store, and
# every chunk's attention in the step's shape, 16 query rows a block of 8 warps, each an eighth of each tile: an
# experiment's build, lower.cpp's mma_attention_step returning true)). Prediction: B prefill(512) 8B +8-11% (gate/up -75
# us, down -35 us a layer of ~950), 0.6B +4-7% (its gate/up 42.6 -> ~30 us); decode unchanged; logits ~0 from A's (the
# same sums in the same order). C over B: the 0.6B's chunk attention (35 us a layer, 128 blocks of 4 warps) -> ~15-20 us
# (+5-8% prefill), the 8B's (40 us) about the same (its K/V tiles read 4x over from L2); logits within the reference's
# bound (other sums). Then B and C judged by the CPU reference on the 8B's 3 layers and C on the 0.6B's 2 (chunks of
# 512).
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/exp && tar xJf .carry-exp/bundle.tar.xz -C /tmp/exp
N=$L; L=/tmp/old/lane-tune; E=/tmp/exp/lane-tune
R06S=${R06%\}},\"gemv_short\":true}
for P in qwen3-0.6b llama-3.1-8b; do
  K="$REC"; [ $P = qwen3-0.6b ] && K="$R06S"
  LT_C=$E KNOBS_C="$K" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_PROMPT_LENS="5 600" KNOBS="$K" timeout 220 \
    bash bench/ab_decode.sh $L $N /tmp/ab $P 2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
done
A=$L; L=$N
LAYERS=3 verify_real l8b llama-3.1-8b q4_k_m "700 300" 100 "$REC"
L=$E
LAYERS=2 verify_real q6c qwen3-0.6b q4_k_m "700 300" 80 "$R06S"
L=$N
LAYERS=3 verify_real l8d llama-3.1-8b q4_k_m "700 300" 80 "$DQ"
