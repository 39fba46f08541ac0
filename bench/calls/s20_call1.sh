#!/usr/bin/env bash
# For the next GPU session (~4 minutes; carry .carry, .llama/llama-bench.xz): (1) s19_call7.sh's load, eager against lazy
# kernels; (2) bench/ncu_decode.sh on llama-3.1-8b Q4_K_M under the side-by-side decode set: each launch of a decode
# step alone against the step as it runs (2.72 ms). Prediction: the launches alone sum to ~2.2 ms, the norms ~2 us each
# (the profile's 6.5 us being the GEMV tails they wait on), the mid-size GEMVs at 2.6-3 TB/s alone.
set -u
bash bench/calls/s19_call7.sh
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256}'
TYPE=q4_k_m KNOBS="$B" timeout 300 bash bench/ncu_decode.sh $L /tmp/n llama-3.1-8b 2>&1 | tee $OUT/ncu-decode.txt | tail -30
