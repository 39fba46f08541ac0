#!/usr/bin/env bash
# For the next GPU session (~7 minutes; carry .carry, .llama/llama-bench.xz): the launch-bound 0.6B decode (#18's 2,500
# tok/s; session 15: 1,087) under the fusions that take launches out of a layer -- fuse_rope (rope, the per-head norm
# and the cache append in the fused q/k/v projection's last block) and fuse_norm (the add + norm in the o and down
# projections' last blocks) -- each alone and together, side by side with llama-bench (bench/speed.sh checks each
# against the reference first). Prediction: each ~28-56 launches fewer a step (~5-10%), fuse_norm's serial tail norm
# cheaper at 1,024 wide than at the 8B's 4,096 (where it lost: 317 against 362 tok/s).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"gemm_half":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"kv_cache":"f16","attn_mma":2'
TYPE=q4_k_m KNOB_SETS="$B}
$B,\"fuse_rope\":true}
$B,\"fuse_norm\":true}
$B,\"fuse_rope\":true,\"fuse_norm\":true}" timeout 400 bash bench/speed.sh $L /tmp/s6 /tmp/llama-bench -- qwen3-0.6b > $OUT/speed-06b.txt 2>&1
echo "speed rc=$?"; grep -E "decode .*tok/s|FAIL|pp512|tg128" $OUT/speed-06b.txt | cut -c1-220
