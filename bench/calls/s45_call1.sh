#!/usr/bin/env bash
# Session 45 (~9 minutes; carry .carry (this tree) and .carry-old (6f711ce: q, k and v a launch each)): a chunk's
# q/k/v as one grouped GEMM (lk_gemm_w_parts / lk_gemm_h_parts: one grid over the parts' output tiles, split by the
# waves it leaves). First correctness on the GPU (measure --verify: tokens, logits within the bound, --stagger bit for
# bit): llama-3.1-8b's first 3 layers trained 30 s (f16 -> Q4_K_M: layers with v in Q4_K group three parts, the one
# with v in Q6_K groups q and k), prompts of its text (40, 300, 700: chunks of 512 on lk_gemm_w_parts, 256 on
# lk_gemm_h_parts); qwen2.5-7b's shape in 2 layers (q/k/v biases, n 4,608 by k 3,584: lk_gemm_h_parts); then the A/B
# of prefill(512) on the full 8B Q4_K_M, the record's prefill set, the build before against this one.
# Prediction: all verified; the 8B's q/k/v 152 -> ~100 us a layer, prefill(512) +4-6% (16,310 -> ~17,100 on an H100).
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/w
. bench/calls/s45_sets.sh
timeout 170 python3 bench/train_checkpoint.py $L llama-3.1-8b /tmp/w/l.gguf --layers 3 --seconds 30 --type f16 > $OUT/train.log 2>&1
echo "train rc=$? ($(( $(date +%s) - T0 )) s)"; grep -iE "loss" $OUT/train.log | tail -1
timeout 60 $L quantize /tmp/w/l.gguf --type q4_k_m -o /tmp/w/l4.gguf -q
$L inspect /tmp/w/l4.gguf | grep -E "attn_v" | cut -c1-60
text_prompts /tmp/w/l.gguf.text 9 16 40 300 700 > /tmp/w/prompts
timeout 150 $L measure /tmp/w/l4.gguf --knobs-json "$REC" --knobs-json "$X2" --knobs-json "$DQ" --verify \
  --prompts /tmp/w/prompts --repeat 1 --cache /tmp/w/c > $OUT/trained-8b.measure 2> $OUT/trained-8b.err
echo "trained 8B 3 layers Q4_K_M: $(grep -cE ' verified ' $OUT/trained-8b.measure) of 3 verified ($(( $(date +%s) - T0 )) s)"
cut -c1-170 $OUT/trained-8b.measure | tail -4; [ -s $OUT/trained-8b.measure ] || tail -5 $OUT/trained-8b.err
LAYERS=2 verify_real q25 qwen2.5-7b q8_0 "600 300" 100 "$REC" "$X2"
echo "($(( $(date +%s) - T0 )) s)"
mkdir -p /tmp/ab
TYPE=q4_k_m ROUNDS=3 PREFILL=512 KNOBS="$REC" timeout $(( 560 - ($(date +%s) - T0) )) \
  bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" | tee $OUT/ab-8b.txt
echo "($(( $(date +%s) - T0 )) s)"
# Where the chunk's time goes, before and after (the profile's launches of 512 rows by kind).
for who in old new; do
  B_=$L; [ $who = old ] && B_=/tmp/old/lane-tune
  chunk_profile $who $B_ /tmp/ab/llama-3.1-8b-q4_k_m.gguf "$REC"
done
echo "($(( $(date +%s) - T0 )) s)"
