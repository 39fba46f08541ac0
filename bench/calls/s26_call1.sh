#!/usr/bin/env bash
# Session 26, call 1 (~8 minutes; carry .carry = this tree's build).
# 1. The shared merge of attention splits (lk_fold_splits, session 25's review: the Fold launch and the step's own
#    fold) on the GPU: `measure --verify` on qwen3-0.6b Q4_K_M, 4 splits under attn_mma 2 (prompts 5, 130, 700) and
#    tiny-gpt-oss with 4 splits through the Fold launch (attn_mma 0) and the step's fold (attn_mma 2).
# 2. ncu on the 0.6B's step attention (depth 5: one tile; depth 512 with 1 and 8 splits) and its add_norm launch.
# 3. The SM carveout (bench/carveout_ab.sh): every kernel preferring the most shared memory, against the driver's
#    choice a kernel, on the 0.6B's decode (positions 5-133) and the 8B's.
# 4. gemv_rows_q6_k 2 (record) against 4 and 1 on the 0.6B's decode (the logits, 127 MB of Q6_K at 0.46 of the rate).
# Predictions: verified everywhere; ncu: the step attention at one tile ~3-4 us alone (the rest of the graph's 7.4 its
#   wait for the q/k/v GEMV's drain and an SM reconfiguration), long-scoreboard stalls; carveout 100 +3-8% on the
#   0.6B (the attention starting beside the q/k/v GEMV's tail), +1-2% on the 8B; gemv_rows_q6_k 4 +1-2% (logits).
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B4=${B/\"attn_splits\":1/\"attn_splits\":4}
B8=${B/\"attn_splits\":1/\"attn_splits\":8}
W=/tmp/v; mkdir -p $W
echo "== 1. verify"
$L synth --preset qwen3-0.6b --type q4_k_m --seed 3 -o $W/q.gguf -q
python3 -c "
import random; r = random.Random(5)
for n in (5, 130, 700): print(8, ' '.join(str(r.randrange(151000)) for _ in range(n)))" > $W/q.prompts
timeout 120 $L measure $W/q.gguf --knobs-json "$B4" --verify --prompts $W/q.prompts --repeat 1 --cache $W/c \
  > $OUT/q06.measure 2> $OUT/q06.err
echo "0.6B q4_k_m 4 splits: $(grep -cE ' verified ' $OUT/q06.measure) verified"; cut -c1-160 $OUT/q06.measure | tail -2
[ -s $OUT/q06.measure ] || tail -5 $OUT/q06.err
$L synth --preset tiny-gpt-oss --seed 5 -o $W/g.gguf -q
python3 -c "
import random; r = random.Random(6)
for n in (5, 100, 200): print(8, ' '.join(str(r.randrange(200)) for _ in range(n)))" > $W/g.prompts
G0='{"numerics":"dequant","kv_cache":"f16","attn_mma":0,"fuse_rope_kv":true,"max_chunk":16,"attn_splits":4}'
G2='{"numerics":"dequant","kv_cache":"f16","attn_mma":2,"fuse_rope_kv":true,"max_chunk":16,"attn_splits":4}'
G3='{"numerics":"int8x2","kv_cache":"f32","attn_mma":0,"max_chunk":16,"attn_splits":8}'
timeout 90 $L measure $W/g.gguf --knobs-json "$G0" --knobs-json "$G2" --knobs-json "$G3" --verify --prompts $W/g.prompts \
  --repeat 1 --cache $W/c > $OUT/gptoss.measure 2> $OUT/gptoss.err
echo "tiny-gpt-oss (fold launch, own fold, f32 fold): $(grep -cE ' verified ' $OUT/gptoss.measure) of 3 verified"
cut -c1-160 $OUT/gptoss.measure | tail -4
[ -s $OUT/gptoss.measure ] || tail -5 $OUT/gptoss.err

echo "== 2. ncu"
for run in "5 $B" "512 $B" "512 $B8"; do
  d=${run%% *}; k=${run#* }
  echo "== depth $d $(echo "$k" | grep -o '"attn_splits":[0-9]*')"
  TYPE=q4_k_m KNOBS="$k" DEPTH=$d timeout 100 bash bench/ncu_kernels.sh $L /tmp/n$d qwen3-0.6b 'lk_attention_mma<128, 128, 1, 7>' 2 2>&1 |
    tee -a $OUT/ncu-attention.txt | tail -34
done
echo "== add_norm at depth 5"
TYPE=q4_k_m KNOBS="$B" DEPTH=5 timeout 80 bash bench/ncu_kernels.sh $L /tmp/nn qwen3-0.6b 'lk_add_rmsnorm<1, 1>' 2 2>&1 |
  tee -a $OUT/ncu-norm.txt | tail -30

echo "== 3. carveout"
TYPE=q4_k_m KNOBS="$B" ROUNDS=3 timeout 120 bash bench/carveout_ab.sh $L /tmp/co qwen3-0.6b 2>&1 | tee $OUT/carveout-06.txt | tail -3
echo "== 4. gemv_rows_q6_k (A 2, B 4, C 1)"
TYPE=q4_k_m KNOBS_A="$B" KNOBS="${B/\"gemv_rows_q6_k\":2/\"gemv_rows_q6_k\":4}" KNOBS_C="${B/\"gemv_rows_q6_k\":2/\"gemv_rows_q6_k\":1}" \
  PREFILL=64 AB_PROMPT_LENS=5 ROUNDS=2 timeout 110 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-q6k.txt | grep "decode A"
echo "== 3b. carveout, 8B"
TYPE=q4_k_m KNOBS="$B" ROUNDS=3 timeout 200 bash bench/carveout_ab.sh $L /tmp/co llama-3.1-8b 2>&1 | tee $OUT/carveout-8b.txt | tail -3
