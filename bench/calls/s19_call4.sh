#!/usr/bin/env bash
# Session 19, call 4 (~6 minutes; carry .carry, .llama/llama-bench.xz): (1) #18's load: llama-3.1-8b Q4_K_M from a warm
# page cache to its first token, our lane (the side-by-side set) against llama-bench (bench/load.sh); prediction: ours
# ~2-3 s (CUDA's start, the Q4_K repacking on 16 cores, 4.9 GB uploaded), llama.cpp's ~1.5-2.5 s. (2) #19: the
# gemm_half set at depth 32k in chunks of 512 (call 3: chunks of 256, prefill(8192) 8,246 tok/s, 0.88x llama.cpp).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2'
TYPE=q4_k_m KNOBS="$B,\"max_chunk\":256}" timeout 200 bash bench/load.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b 2>&1 | tee $OUT/load.txt | tail -5
TYPE=q4_k_m KNOB_SETS="$B,\"max_chunk\":512,\"attn_splits\":32}" timeout 300 bash bench/depth.sh $L /tmp/d "" -- llama-3.1-8b > $OUT/depth.txt 2>&1
echo "depth rc=$?"; sed -n '/==== depth/,$p' $OUT/depth.txt | tail -6 | cut -c1-200
