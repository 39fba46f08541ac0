#!/usr/bin/env bash
# Session 27, call 1 (~6 minutes; carry .carry: this tree's build).
# gemv_short (new knob): a plain decode GEMV whose rows are one round of loads takes 4x its rows a warp with one unit
# of each in flight (lk_gemv's A 1), the registers of the 3 empty rounds holding those rows' weights. The 0.6B's logits
# (151,936 Q6_K rows of k 1024: 32 units, one round) ran at 0.47 of the read rate (60 us of the step's ~590), a warp
# reading 1.7 KB and exiting; 4x the bytes in flight a warp at the same registers. Also the arg-max's loop unrolled.
# 1. Correctness: `measure --verify` on qwen3-0.6b Q4_K_M (prompts 5, 130), the record with gemv_short (Q6_K 2 and 1
#    rows a warp: 8 and 4 under the knob).
# 2. Decode A/B/C in one build (bench/ab_decode.sh, 3 rounds): A the record, B + gemv_short, C + gemv_short with
#    gemv_rows_q6_k 1; the logits compared (the same sums a row: bitwise). Then B's profile.
# Prediction: verified; logits 60 -> ~33 us; 0.6B decode 1,707 -> ~1,790 (+4-5%); C within 1% of B.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
A='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B=${A/\"pdl\":true/\"pdl\":true,\"gemv_short\":true}
C=${B/\"gemv_rows_q6_k\":2/\"gemv_rows_q6_k\":1}
echo "== 1. verify"
verify_real q06 qwen3-0.6b q4_k_m "5 130" 150 "$B" "$C"
echo "== 2. A/B/C"
TYPE=q4_k_m KNOBS_A="$A" KNOBS="$B" KNOBS_C="$C" PREFILL=64 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" ROUNDS=3 timeout 240 \
  bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-qwen3-0.6b.txt | grep -E "decode|tokens|L2" | cut -c1-200
D=/tmp/ab/qwen3-0.6b.ab-b
printf '128 %s\n' "$(python3 -c "import random; r=random.Random(7); print(' '.join(str(r.randrange(151000)) for _ in range(5)))")" > /tmp/ab/t.prompt
$D/lane /tmp/ab/qwen3-0.6b-q4_k_m.gguf $D/lane.sidecar --prompts /tmp/ab/t.prompt --profile > $OUT/profile-06.txt 2>&1
grep -E "PROFILE: (gemv logits|argmax)|DECODE_TOK" $OUT/profile-06.txt
python3 bench/profile_table.py $OUT/profile-06.txt qwen3-0.6b decode $D/lane.json 2>&1 | head -14
