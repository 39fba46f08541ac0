#!/usr/bin/env bash
# Prepared in session 43 (~8 minutes; carry .carry rebuilt at the tree): gemma2 (built in session 43: gemma3's sandwich
# norms, GELU and scaled embedding without q/k norms; the attention logits softcapped in every attention path, the
# output logits by the arg-max launch in place) on the GPU for the first time. `measure --verify` (the CPU reference:
# tokens, logits within the numerics' bound, --stagger bit for bit) of 8 knob sets on tiny-gemma2 (caps of 5 that bend
# its logits) in q8_0 and llama.cpp's Q4_K_M and Q5_K_M mixes (a 200-token prompt past its window of 16, then 16
# tokens); then gemma2-2b's real widths (head_dim 256, 8 query heads over 4, 256,000 tokens, caps 50 / 30) in 2 layers,
# Q4_K_M, on prompts of 5 and 700; then drawn gemma2 shapes.
# Prediction: every set verified on every file (the CPU plan model matches the reference on these sets in ctest:
# GemmaOnCpu); the kernels' new code is the softcap in lk_attention, _lanes and _mma and in lk_argmax.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
SETS=("${DENSE_SETS[@]}")
VERIFY_PRESETS="tiny-gemma2:q8_0 tiny-gemma2:q4_k_m tiny-gemma2:q5_k_m" verify_presets 240 "${SETS[@]}"
# (verify_real takes the file at its name when it is there: the preset's 2 layers, written here)
$L synth --preset gemma2-2b --layers 2 --type q4_k_m --seed 3 -o /tmp/v/gemma2-2b2-q4_k_m.gguf -q
verify_real gemma2-2b gemma2-2b2 q4_k_m "5 700" 150 "${SETS[0]}" "${SETS[3]}" "${SETS[4]}"  # (heads 256 wide: no tensor-core attention)
# Drawn gemma2 shapes (bench/shapes.sh ARCHS=gemma2: heads 32-256 wide, 1-6 query heads a KV head, windows 8-128,
# global every 2nd or 3rd layer, caps 3-50), 2 drawn points each, judged by the CPU reference on the GPU.
ARCHS=gemma2 SEED=42 timeout 200 bash bench/shapes.sh $L /tmp/sh 3 2 > $OUT/shapes-gemma2.txt 2>&1
echo "shapes: $(grep 'verdict=ok .*stagger=ok' $OUT/shapes-gemma2.txt | sort -u | wc -l) points verified, $(grep -E 'FAIL|DIFFERS|RUN rc' $OUT/shapes-gemma2.txt | sort -u | wc -l) failing"
# The CPU reference against Hugging Face transformers' Gemma2ForCausalLM (float64, on this machine's CPUs) on tiny-gemma2
# in f32 and on a drawn gemma2 shape: a third implementation beside llama.cpp's (bench/llama_cpu_check.sh, here).
mkdir -p /tmp/ct
$L synth --preset tiny-gemma2 --type f32 --seed 5 -o /tmp/ct/tiny-gemma2.gguf -q
$L synth --shape '{"architecture":"gemma2","name":"g2-draw","layers":3,"d_model":384,"heads":6,"kv_heads":2,"head_dim":64,"ffn":640,"vocab":700,"context":4096,"tied_output":true,"sliding_window":8,"sliding_pattern":3,"attn_softcap":10,"final_softcap":3}' --type f32 --seed 6 -o /tmp/ct/g2-draw.gguf -q
timeout 150 python3 bench/check_transformers.py $L /tmp/ct/tiny-gemma2.gguf /tmp/ct/g2-draw.gguf --device cpu \
  --prompt "1 17 42 300 5 99 250 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25" > $OUT/transformers-gemma2.txt 2>&1
grep -E "^(VERSIONS|ROPE|RESULT)" $OUT/transformers-gemma2.txt; tail -3 $OUT/transformers-gemma2.txt
