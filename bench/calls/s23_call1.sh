#!/usr/bin/env bash
# Session 23, call 1 (~6 minutes; carry .carry = this tree, .llama/llama-bench.xz):
# (1) #18's load after the repacking's 64-bit word form (kernels/host_memory.cuh; 5x its GB/s on this machine's 2
#     cores, bench/NOTES.md "session 22"): bench/load.sh on llama-3.1-8b Q4_K_M, side by side with llama-bench.
#     Prediction: the lane's load to its first token 0.857 s (session 20) -> 0.70-0.80 s, llama-bench ~0.85 s.
# (2) bench/repack_bench.cu on the machine's 16 cores (prediction: Q4_K and Q6_K past 20 GB/s, staging reused).
# (3) The SASS of the 8B lane's decode GEMVs (this machine has no cuobjdump): what the ~117 instructions a lane's
#     32-weight unit of the gate/up GEMV are (session 22's ncu), before changing them.
# (4) The 0.6B's per-launch decode profile with the record's knobs (bench/profile_best.sh): where its ~726 us a
#     step goes now (prediction: ~230 launches, the GEMVs 2-4 us each, the norms and rope ~2 us).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256,"attn_splits":1}'
TYPE=q4_k_m KNOBS="$B" timeout 240 bash bench/load.sh $L /tmp/d /tmp/llama-bench -- llama-3.1-8b 2>&1 | tee $OUT/load.txt | tail -5
cuobjdump -sass /tmp/d/llama-3.1-8b.load/lane > /tmp/all.sass 2>&1
awk '/Function :/ {keep = ($0 ~ /lk_gemv/)} keep' /tmp/all.sass | xz -9 > $OUT/gemv.sass.xz
echo "sass: $(grep -c 'Function :' /tmp/all.sass) functions, gemv part $(stat -c %s $OUT/gemv.sass.xz) bytes xz"
(nvcc -O3 -std=c++17 -o /tmp/repack_bench bench/repack_bench.cu && timeout 60 /tmp/repack_bench 1024) > $OUT/repack.txt 2>&1
tail -12 $OUT/repack.txt
TYPE=q4_k_m timeout 200 bash bench/profile_best.sh $L /tmp/p qwen3-0.6b "$B" > $OUT/profile-0.6b.txt 2>&1
head -70 $OUT/profile-0.6b.txt
