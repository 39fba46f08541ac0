#!/usr/bin/env bash
# Session 24, call 2 (~4 minutes; carry .carry-old = 29ff937's build; bench/tmpbin/gemm_bench built here for sm_90a):
# 1. gemm_wgmma's first run (kernels/gemm_wgmma.cuh lk_gemm_w: a warpgroup a block, wgmma.m64n64k16 with the weights'
#    A fragments from registers and the activations through a descriptor, the next stage's weights unpacked while the
#    tensor cores multiply): bench/gemm_bench.cu at the 8B's shapes, 256 and 512 rows, against lk_gemm_h and f64.
#    Prediction: correct (rel_l2 ~3e-4 as lk_gemm_h's); gate/up 1.5-2x lk_gemm_h's 211-225 TFLOPS; q/down 1.3-1.8x.
# 2. Whether tiny-gpt-oss's int8 sets fail at 29ff937 too (call 1: 0.030-0.032 against the 0.03 bound at HEAD).
set -u
. bench/calls/prelude.sh
cuobjdump -sass bench/tmpbin/gemm_bench | grep -c HGMMA | sed 's/^/HGMMA instructions: /'
timeout 300 bench/tmpbin/gemm_bench 2>&1 | tee $OUT/gemm.txt
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
L=/tmp/o/lane-tune; export LD_LIBRARY_PATH=/tmp/o/lib:$LD_LIBRARY_PATH
. bench/calls/verify_presets.sh
S1='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":1,"max_chunk":64}'
S3='{"numerics":"int8","gemv_prequant":true,"fuse_rope_kv":true,"pdl":true,"attn_splits":1,"max_chunk":16}'
verify_presets 150 "$S1" "$S3"
