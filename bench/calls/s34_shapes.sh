#!/usr/bin/env bash
# Prepared in session 34 (no device lent) for the next GPU session (~5 minutes; carry .carry, rebuilt and re-bundled
# after session 34's commits). Lanes of shapes no preset has, on the H200: bench/shapes.sh draws 6 shapes (dense and
# mixtures; heads 32-256 wide, 1-8 query heads a key/value head, widths that are not whole 256-blocks, half of them a
# few hundred MB) in random matrix types, 3 knob points each drawn uniformly from the valid points (lane-tune knobs
# --sample), each built, judged by the CPU reference (tokens, logits within the numerics' bound, --stagger bit for
# bit) and timed. Prediction: every point verified (the plan model passed 1,500 such draws on this machine, and 18
# lanes of 6 shapes built with nvcc here); a failure is a kernel's, for a shape no preset has. Then the CPU reference
# itself against transformers on those shapes' files in the types bench/check_transformers.py reads.
set -u
. bench/calls/prelude.sh
timeout 420 bash bench/shapes.sh $L /tmp/shp 6 3 > $OUT/shapes.log 2>&1
echo "shapes rc=$?"
grep -E "^====|verdict|FAIL|NO POINT|DIFFERS|rc=" $OUT/shapes.log | grep -v "^==== sweep" | cut -c1-260 | head -60
# The judge judged: the CPU reference against transformers on those shapes' files the script reads (q8_0, f16, bf16,
# f32; session 34's numpy stand-in passed 16 such shapes at ~2.5e-8 on the CPU machine).
CT=$(ls /tmp/shp/s*/shape*.gguf | grep -E 'shape[0-9]+(-f16|-bf16|-f32)?\.gguf$')
if [ -n "$CT" ]; then
  timeout 240 python3 bench/check_transformers.py $L $CT --n-gen 4 > $OUT/transformers.txt 2>&1
  echo "transformers rc=$?"; grep -E "RESULT|VERSIONS" $OUT/transformers.txt | cut -c1-200
fi
