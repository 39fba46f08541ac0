#!/usr/bin/env bash
# Session 13, call 6: call 5 again for the gemm_half lanes alone (call 5's failed: lk_half_rows took a size_t the
# image passes as an int; its baselines stand): the trained qwen3-0.6b (kept from call 5 where the machine is warm)
# under dequant and int8 with gemm_half, `measure --verify`, a 2,048-token prompt then 64
# (the device time left allowed the trained checkpoint's q8_0 and f16 lanes alone).
set -u
. bench/calls/prelude.sh
[ -f /tmp/w/q8.gguf ] || . bench/calls/trained_qwen3.sh
I='"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
D='"numerics":"dequant","max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
. bench/calls/measure_sets.sh
measure_sets 100 /tmp/w/q8.gguf q8 "{$I,\"gemm_half\":true}"
measure_sets 100 /tmp/w/q.gguf f16 "{$D,\"gemm_half\":true}"
measure_table
