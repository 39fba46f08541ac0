#!/usr/bin/env bash
# Session 50, call 2 (~9 minutes; carry .carry (B: the tree's build), .carry-old (A: 9a1f806's), bench/.ab_attn_old
# and bench/.ab_attn_new (attention_bench at 9a1f806 and at the tree; ignored by git)). The step attention's own fold
# (the last block's merge of the splits, ~2.6 us + 0.15 a split on the H100): each head's split weights by a warp's
# lanes at once (was one thread's chain of a load and an exponential a split) and, in lanes, the o projection's int8
# copy quantized from the merged values in shared memory, not read back from global memory (as one split does); and
# lk_last_arrival (the fold's and the split-k GEMMs' count) as one acquire-release atomic by thread 0 after the barrier
# in place of every thread's sequentially consistent fence before it and the last block's after it.
# The same arithmetic in the same order: logits must be bitwise equal (if not, revert). Prediction: attention_bench
# mmafold at 512-2,048 with 8-16 splits -0.2-0.4 us, at 32k/32 -0.5-1 us; decode at 512-640 positions (where the
# splits fold) 0.6B +1.5-3% (the tuner's 16-split set), 8B +0.3-0.8% (REC, 16 splits); after 5 tokens no change.
# SHORT=1 (a short budget, ~5 minutes): the 0.6B's A/B and verification, attention_bench at 512 and 32,768.
set -u
[ -n "${SHORT:-}" ] && DEPTHS="512 32768" RUNS=qwen3-0.6b:512:T16:3
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
echo "== attention_bench mmafold at depths 512, 2,048, 32,768 (A old, B new)"
for d in ${DEPTHS:-512 2048 32768}; do
  for s in old new; do
    timeout 40 bench/.ab_attn_$s mmafold $d 2>&1 | grep mmafold | sed "s/^/$s /" | tee -a $OUT/attn.txt
  done
done
T16=$(sed -n 2p bench/calls/s49_sets06.txt)
ab_records ${RUNS:-qwen3-0.6b:512:T16:3 llama-3.1-8b:512:REC:2}
# The tree's build judged by the CPU reference (tokens, logits within the bound, --stagger bit for bit) where the splits
# fold and the chunks' GEMMs split along k count their parts: prompts past 4 tiles of positions.
. bench/calls/verify_presets.sh
LAYERS=2 verify_real fold06 qwen3-0.6b q4_k_m "100 300 700" 150 "$T16"
[ -n "${SHORT:-}" ] || LAYERS=2 verify_real fold8 llama-3.1-8b q4_k_m "300 700" 150 "$REC"
