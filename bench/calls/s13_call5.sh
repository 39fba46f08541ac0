#!/usr/bin/env bash
# Session 13, call 5: gemm_half in the lane (#16, #18). (1) qwen3-0.6b trained 25 s, as f16, q8_0 and q4_k_m: the
# chunks' GEMMs in f16 against the int8 tiled ones and (f16 checkpoint, dequant) the GEMV slabs, judged by
# `measure --verify` on prompts of the training text up to 2,000 tokens; the workload a 2,048-token prompt then 64
# generated. (2) llama-3.1-8b Q4_K_M side by side with llama-bench (bench/speed.sh): the session-10 best int8 lane
# (gemm_tile 128) and the same with gemm_half.
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
. bench/calls/trained_qwen3.sh
timeout 30 $L quantize /tmp/w/q.gguf --type q4_k_m -o /tmp/w/q4.gguf -q
I='"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
D='"numerics":"dequant","max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
. bench/calls/measure_sets.sh
measure_sets 200 /tmp/w/q.gguf f16 "{$D}" "{$D,\"gemm_half\":true}"
measure_sets 200 /tmp/w/q8.gguf q8 "{$I,\"gemm_prequant\":true,\"gemm_tile\":128}" "{$I,\"gemm_half\":true}" "{$D,\"gemm_half\":true}"
measure_sets 200 /tmp/w/q4.gguf q4km "{$I,\"gemm_prequant\":true,\"gemm_tile\":128,\"gemv_rows_q6_k\":2}" "{$I,\"gemm_half\":true,\"gemv_rows_q6_k\":2}"
measure_table
B='{"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
TYPE=q4_k_m KNOB_SETS="$B,\"gemm_prequant\":true,\"gemm_tile\":128}
$B,\"gemm_half\":true}" timeout 330 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; tail -25 $OUT/speed.txt
