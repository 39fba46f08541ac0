#!/usr/bin/env bash
# Prepared in sessions 36-37 (~6 minutes; carry .carry; after s37_norm_fold_lane.sh has verified the forms): decode
# A/B/C on llama-3.1-8b Q4_K_M and A/B/C/D on qwen3-0.6b Q4_K_M: A the record's sets, B + norm_fold (the spans' last
# blocks by counters and fences), C + norm_fold_groups (blocks of one 32-group, no counters; 1,024 threads at a row a
# warp, 512 for the Q6_K down), D (the 0.6B) + glu_groups (its GLU in 96 blocks of a 32-group writing the down's copy:
# 158 launches a step where A has ~240). B and C end a group with the same code: their logits are bitwise equal (the
# last lines compare them).
# Prediction: B: the 8B +0-5% (63 norm launches of ~3.9 us gone, but session 21's count-and-fence on the GLU lost 4.6%:
# each block's fence and atomic hold its end), the 0.6B +3-8%. C: the 8B +4-8% over A, the 0.6B +6-10% (no fence, no
# atomic, no second L2 read; its cost a 1,024-thread block's later start under PDL). D: +2-5% over C.
# If one wins: a prior with it (coordinator/src/model_search.cpp kPriors) and bench/speed.sh side by side.
set -u
. bench/calls/prelude.sh
R='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
S='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_short":true,"pdl_first":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1,"glu_stage":true}'
p() { echo "${1%\}},\"norm_fold\":true}"; }
g() { echo "${1%\}},\"norm_fold\":true,\"norm_fold_groups\":true}"; }
KNOBS_A="$R" KNOBS="$(p "$R")" KNOBS_C="$(g "$R")" TYPE=q4_k_m PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
  ROUNDS=3 timeout 240 bash bench/ab_decode.sh $L $L /tmp/ab-f llama-3.1-8b > $OUT/ab-fold-8b.txt 2>&1
grep -E "decode A|prefill|logits|FAIL|rror" $OUT/ab-fold-8b.txt | cut -c1-200
for s in a b c; do
  D=/tmp/ab-f/llama-3.1-8b.ab-$s
  [ -x $D/lane ] && $D/lane /tmp/ab-f/llama-3.1-8b-q4_k_m.gguf $D/lane.sidecar 64 1 2 3 4 5 --profile 2>&1 |
    awk -v s=$s '/^PROFILE: (add_norm|gemv_fold|norm)/ {n[$2]++; t[$2] += $NF} END {for (k in n) printf "%s: %s %d launches %.1f us\n", s, k, n[k], t[k]}'
done
KNOBS_A="$S" KNOBS="$(p "$S")" KNOBS_C="$(g "$S")" KNOBS_D="$(g "$S" | sed 's/}$/,"glu_groups":true}/')" \
  AB_SIDES="a b c d" TYPE=q4_k_m PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 \
  timeout 180 bash bench/ab_decode.sh $L $L /tmp/ab-f6 qwen3-0.6b > $OUT/ab-fold-06b.txt 2>&1
grep -E "decode A|logits|FAIL|rror" $OUT/ab-fold-06b.txt | cut -c1-200
# The two forms' logits (B against C: the same numbers expected, rel_l2=0).
for w in "/tmp/ab-f/llama-3.1-8b 128256" "/tmp/ab-f6/qwen3-0.6b 151936"; do
  set -- $w
  [ -f $1.ab-b/ab.bin ] && [ -f $1.ab-c/ab.bin ] &&
    echo "B/C $(basename $1): $(python3 bench/compare_logits.py $1.ab-b/ab.bin $1.ab-c/ab.bin $2 --tol 1e-3 | tail -1)"
done
