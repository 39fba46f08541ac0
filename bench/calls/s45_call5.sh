#!/usr/bin/env bash
# Session 45 (~4 minutes; carry .carry): call 4's trained verification again without llama.cpp's build beside it (its
# measure ran out of time after the first set, verified): llama-3.1-8b's first 3 layers trained 15 s, f16 -> Q4_K_M,
# prompts of its text (40, 300, 700), the record's set, int8x2 in chunks of 256 and dequant over bf16.
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
mkdir -p /tmp/w
timeout 120 python3 bench/train_checkpoint.py $L llama-3.1-8b /tmp/w/l.gguf --layers 3 --seconds 15 --type f16 > $OUT/train.log 2>&1
echo "train rc=$? ($(( $(date +%s) - T0 )) s)"; grep -E "TRAINED" $OUT/train.log | tail -1
timeout 60 $L quantize /tmp/w/l.gguf --type q4_k_m -o /tmp/w/l4.gguf -q
text_prompts /tmp/w/l.gguf.text 9 16 40 300 700 > /tmp/w/prompts
timeout $(( 330 - ($(date +%s) - T0) )) $L measure /tmp/w/l4.gguf --knobs-json "$REC" --knobs-json "$X2" --knobs-json "$DQ" --verify \
  --prompts /tmp/w/prompts --repeat 1 --cache /tmp/w/c > $OUT/trained-8b.measure 2> $OUT/trained-8b.err
echo "trained 8B 3 layers Q4_K_M: $(grep -cE ' verified ' $OUT/trained-8b.measure) of 3 verified ($(( $(date +%s) - T0 )) s)"
cut -c1-170 $OUT/trained-8b.measure | tail -4; grep measured $OUT/trained-8b.err
