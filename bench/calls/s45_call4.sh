#!/usr/bin/env bash
# Session 45 (~8 minutes; carry .carry (this tree) and .llama/src.tar.xz): the grouped q/k/v GEMM judged on trained
# weights (llama-3.1-8b's first 3 layers trained 20 s on local text, f16 -> Q4_K_M: layers 0-1 group q, k and v,
# layer 2 q and k beside a Q6_K v; prompts of the text of 40, 300 and 700 tokens: chunks of 512 on lk_gemm_w_parts,
# of 256 on lk_gemm_h_parts, both with their tails split), then llama-bench (built here in the background) on the
# 8B and 0.6B Q4_K_M files call 3 timed, and the new build's figures in the same run (measure, the record's sets).
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
(bash bench/llama_build.sh .llama/src.tar.xz /tmp/lb /tmp/llama-bench > $OUT/llama_build.txt 2>&1) &
LBP=$!
. bench/calls/s45_sets.sh
mkdir -p /tmp/w /tmp/ab
timeout 150 python3 bench/train_checkpoint.py $L llama-3.1-8b /tmp/w/l.gguf --layers 3 --seconds 20 --type f16 > $OUT/train.log 2>&1
echo "train rc=$? ($(( $(date +%s) - T0 )) s)"; grep -E "TRAINED" $OUT/train.log | tail -1
timeout 60 $L quantize /tmp/w/l.gguf --type q4_k_m -o /tmp/w/l4.gguf -q
$L inspect /tmp/w/l4.gguf | grep -E "attn_[qkv]" | cut -c1-50 | tr '\n' ';'; echo
text_prompts /tmp/w/l.gguf.text 9 16 40 300 700 > /tmp/w/prompts
timeout 130 $L measure /tmp/w/l4.gguf --knobs-json "$REC" --knobs-json "$X2" --knobs-json "$DQ" --verify \
  --prompts /tmp/w/prompts --repeat 1 --cache /tmp/w/c > $OUT/trained-8b.measure 2> $OUT/trained-8b.err
echo "trained 8B 3 layers Q4_K_M: $(grep -cE ' verified ' $OUT/trained-8b.measure) of 3 verified ($(( $(date +%s) - T0 )) s)"
cut -c1-170 $OUT/trained-8b.measure | tail -4; [ -s $OUT/trained-8b.measure ] || tail -5 $OUT/trained-8b.err
$L synth --preset llama-3.1-8b --type q4_k_m --seed 1 -o /tmp/ab/8b.gguf -q &
$L synth --preset qwen3-0.6b --type q4_k_m --seed 1 -o /tmp/ab/06b.gguf -q &
wait; tail -2 $OUT/llama_build.txt; echo "($(( $(date +%s) - T0 )) s)"
for F in 06b 8b; do
  K="$REC"; [ $F = 06b ] && K="$R06"
  timeout 100 $L measure /tmp/ab/$F.gguf --knobs-json "$K" --workload 512,128 --repeat 3 --cache /tmp/ab/c \
    > $OUT/lane-$F.measure 2> /dev/null; cut -c1-120 $OUT/lane-$F.measure | tail -1
  timeout 120 /tmp/llama-bench -m /tmp/ab/$F.gguf -p 512 -n 128 -fa 1 -ngl 99 -r 3 -o md 2>&1 | grep -E '^\|' | tee -a $OUT/llama.txt
  echo "($(( $(date +%s) - T0 )) s)"
done
