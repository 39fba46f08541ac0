#!/usr/bin/env bash
# Session 25, call 4 (~6 minutes; carry .carry = this tree's build): the step's own fold with splits of whole tiles
# (lk_am_fold_chunk: a row of few positions takes fewer splits, one alone writing the output as with one split), the
# fold parallel in its block. Call 3: 4 splits cost the short rows (positions 5-133) 8-10% (0.6B 1,505 -> 1,379, 8B
# 481 -> 454) while the 0.6B at 512-640 gained 1.24x.
# 1. Correctness: `measure --verify` (the CPU reference, --stagger) on qwen3-0.6b Q4_K_M, 4 splits, prompts of 5, 64,
#    65, 130 and 700 tokens (1, 2, 3 and 4 parts); tiny-gpt-oss (sinks, a 128-position window) dequant f16, 4 splits.
# 2. qwen3-0.6b A/B/C (1, 4, 8 splits), decode at positions 5-133, then at 512-640; attention_bench's mmafold.
# Prediction: verified; at 5-133 4 splits within 2% of one; at 512-640 1.25x; 8 splits >= 4 at 512.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B4=${B/\"attn_splits\":1/\"attn_splits\":4}
B8=${B/\"attn_splits\":1/\"attn_splits\":8}
W=/tmp/v; mkdir -p $W
$L synth --preset qwen3-0.6b --type q4_k_m --seed 3 -o $W/q.gguf -q
python3 -c "
import random; r = random.Random(5)
for n in (5, 64, 65, 130, 700): print(8, ' '.join(str(r.randrange(151000)) for _ in range(n)))" > $W/q.prompts
timeout 150 $L measure $W/q.gguf --knobs-json "$B4" --verify --prompts $W/q.prompts --repeat 1 --cache $W/c \
  > $OUT/q06.measure 2> $OUT/q06.err
echo "0.6B q4_k_m 4 splits: $(grep -cE ' verified ' $OUT/q06.measure) verified"; cut -c1-200 $OUT/q06.measure | tail -2
[ -s $OUT/q06.measure ] || tail -5 $OUT/q06.err
$L synth --preset tiny-gpt-oss --seed 5 -o $W/g.gguf -q
python3 -c "
import random; r = random.Random(6)
for n in (5, 100, 200): print(8, ' '.join(str(r.randrange(200)) for _ in range(n)))" > $W/g.prompts
G='{"numerics":"dequant","kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"max_chunk":16,"attn_splits":4}'
timeout 60 $L measure $W/g.gguf --knobs-json "$G" --verify --prompts $W/g.prompts --repeat 1 --cache $W/c \
  > $OUT/gptoss.measure 2> $OUT/gptoss.err
echo "tiny-gpt-oss 4 splits: $(grep -cE ' verified ' $OUT/gptoss.measure) verified"; cut -c1-200 $OUT/gptoss.measure | tail -2
[ -s $OUT/gptoss.measure ] || tail -5 $OUT/gptoss.err
for at in 5 512; do
  TYPE=q4_k_m KNOBS_A="$B" KNOBS="$B4" KNOBS_C="$B8" PREFILL="64" AB_DECODE_AT=$at AB_PROMPT_LENS="5" ROUNDS=2 \
    timeout 100 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-06-at$at.txt | grep "decode A"
done
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o /tmp/attn bench/attention_bench.cu && \
  timeout 40 /tmp/attn mmafold 2>&1 | tee $OUT/attn-mmafold.txt | awk '$2 == 1'
