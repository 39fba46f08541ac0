#!/usr/bin/env bash
# Session 15, call A (~7 minutes; carry .carry): gemv_prefetch (a decode GEMV's warps ask L2 for their rows before
# they wait on the launch before them, under pdl) against the same set without it, on llama-3.1-8b and qwen3-0.6b
# Q4_K_M (bench/speed.sh without llama-bench: each set checked against the reference and --stagger, then timed, the
# fastest decode profiled).
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
H="$B,\"gemm_half\":true,\"kv_cache\":\"f16\",\"attn_mma\":2"
TYPE=q4_k_m KNOB_SETS="$H}
$H,\"gemv_prefetch\":true}" timeout 280 bash bench/speed.sh $L /tmp/s -- llama-3.1-8b > $OUT/speed-8b.txt 2>&1
echo "speed 8b rc=$?"
TYPE=q4_k_m KNOB_SETS="$H}
$H,\"gemv_prefetch\":true}" timeout 150 bash bench/speed.sh $L /tmp/s6 -- qwen3-0.6b > $OUT/speed-06b.txt 2>&1
echo "speed 0.6b rc=$?"
for f in $OUT/speed-8b.txt $OUT/speed-06b.txt; do sed -n '/==== /,$p' $f | cut -c1-220 | head -40; done
