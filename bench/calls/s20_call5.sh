#!/usr/bin/env bash
# Session 20, call 5 (~4.5 minutes; carry .carry): (1) decode at depth 32k with 64 position splits (call 4: 32 splits,
# 201.6 tok/s). Prediction: ~+5-10% (512 blocks, more bytes in flight). (2) ncu's sections on the first decode step's
# attention at depth 32768 (after the prefill's 2,048 chunk launches): what bounds it at 1.7 TB/s.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512'
TYPE=q4_k_m KNOB_SETS="$B,\"attn_splits\":64}" timeout 110 bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth64.txt 2>&1
sed -n '/==== depth/,$p' $OUT/depth64.txt | cut -c1-200
TYPE=q4_k_m KNOBS="$B,\"attn_splits\":32}" CONTEXT=33024 DEPTH=32768 SKIP=2048 timeout 140 bash bench/ncu_kernels.sh $L /tmp/n llama-3.1-8b 'lk_attention_mma' 1 > $OUT/ncu-attn.txt 2>&1
grep -E "ncu rc|^  [a-z]|Duration|DRAM Through|Memory Through|Achieved Occ|Registers Per|Waves|Block Limit|L2 Hit" $OUT/ncu-attn.txt | cut -c1-160 | head -30
