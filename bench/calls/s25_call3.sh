#!/usr/bin/env bash
# Session 25, call 3 (~9 minutes; carry .carry = this tree's build, .llama/llama-bench.xz): the record side by side with
# llama-bench (bench/speed.sh, each set checked against the CPU reference first) on llama-3.1-8b and qwen3-0.6b
# Q4_K_M, chunks of 512 (lk_gemm_w with the direct Q4_K unpacking on the 8B's), two sets: one split (as session 23's
# record) and 4 splits with the attention's own fold (call 2: the 0.6B's decode at positions 512-640 941 -> 1,191
# tok/s; a chunk's attention now split only while its blocks fill fewer than the multiprocessors, so the 512-row
# chunks stay unsplit). Then the 0.6B's decode at 512-640, 1 split against 4 (the fold now parallel in the block).
# Prediction: 8B decode ~480-495, prefill(512) ~16,000 (1.6-1.7x); 0.6B decode ~1,450-1,550, prefill ~50-60k;
# at 512-640 the 0.6B 4 splits 1.25-1.35x of one.
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B4=${B/\"attn_splits\":1/\"attn_splits\":4}
TYPE=q4_k_m KNOB_SETS="$B"$'\n'"$B4" timeout 440 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b qwen3-0.6b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; sed -n '/==== speed/,$p' $OUT/speed.txt | cut -c1-250 | tail -40
TYPE=q4_k_m KNOBS_A="$B" KNOBS="$B4" PREFILL="512" AB_DECODE_AT=512 AB_PROMPT_LENS="5" ROUNDS=2 \
  timeout 100 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-06.txt | grep "===="
