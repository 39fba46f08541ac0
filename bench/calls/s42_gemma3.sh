#!/usr/bin/env bash
# Prepared in session 42 (~8 minutes; carry .carry rebuilt at the tree): gemma3 (built in session 42: sandwich norms,
# GELU, the embedding scaled by sqrt(d_model), sliding layers with their own rope base beside global ones with linear
# rope scaling) on the GPU for the first time. `measure --verify` (the CPU reference: tokens, logits within the
# numerics' bound, --stagger bit for bit) of 8 knob sets on tiny-gemma3 in q8_0 and llama.cpp's Q4_K_M and Q5_K_M mixes
# (a 200-token prompt past its window of 16, then 16 tokens); then gemma3-1b's real widths (head_dim 256, one key/value
# head, 262,144 tokens) in 2 layers, Q4_K_M, on prompts of 5 and 700 (its window is 512).
# Prediction: every set verified on every file (the CPU plan model matches the reference on these sets in ctest:
# Gemma3OnCpu); the kernels new to the GPU are lk_swiglu<1> (GELU) and lk_embed's scale.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
SETS=("${DENSE_SETS[@]}")
VERIFY_PRESETS="tiny-gemma3:q8_0 tiny-gemma3:q4_k_m tiny-gemma3:q5_k_m" verify_presets 240 "${SETS[@]}"
# (verify_real takes the file at its name when it is there: the preset's 2 layers, written here)
$L synth --preset gemma3-1b --layers 2 --type q4_k_m --seed 3 -o /tmp/v/gemma3-1b2-q4_k_m.gguf -q
verify_real gemma3-1b gemma3-1b2 q4_k_m "5 700" 150 "${SETS[0]}" "${SETS[3]}" "${SETS[4]}"  # (heads 256 wide: no tensor-core attention)
# Drawn gemma3 shapes (bench/shapes.sh ARCHS=gemma3: heads 32-256 wide, 1-6 query heads a KV head, windows 8-128,
# global every 2nd or 3rd layer, untied outputs too), 2 drawn points each, judged by the CPU reference on the GPU.
ARCHS=gemma3 SEED=42 timeout 200 bash bench/shapes.sh $L /tmp/sh 3 2 > $OUT/shapes-gemma3.txt 2>&1
echo "shapes: $(grep 'verdict=ok .*stagger=ok' $OUT/shapes-gemma3.txt | sort -u | wc -l) points verified, $(grep -E 'FAIL|DIFFERS|RUN rc' $OUT/shapes-gemma3.txt | sort -u | wc -l) failing"
