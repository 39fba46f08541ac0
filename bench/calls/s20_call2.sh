#!/usr/bin/env bash
# Session 20, call 2 (~9 minutes; carry .carry, .carry-old): the register-resident norm (kernels/norm.cuh: a row's
# loads issued at once, the weights read before the PDL wait, the int8 copy written from registers) and the GEMVs'
# first round of weights loaded before their PDL wait (kernels/gemv.cuh, EARLY: under the small launch before each).
# (1) correctness: formats_check.sh's 11 sets (the int8 copy, int8x2, fuse_norm's tail, precise's fallback) on 5
#     types and tiny-moe's fused combine norm, each against the CPU reference;
# (2) A/B against the previous build (.carry-old) on llama-3.1-8b and qwen3-0.6b Q4_K_M, the side-by-side set.
#     Prediction: the norm ~9.7 -> ~3 us alone; with the early weights the 8B decode +10-15% (2.76 -> ~2.45 ms),
#     the 0.6B +10-15%;
# (3) ncu's full sections on the decode norm, the 8B's gate/up and a GEMV, and the step attention at depth 32k
#     (1.7 TB/s by the step's times: what bounds it).
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry-old/bundle.tar.xz -C /tmp/o
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256}'
TYPES="q4_k_m q4_k q6_k mxfp4 q8_0" LANE_TYPES="q4_k_m" SPEED_PRESETS="" timeout 240 bash bench/formats_check.sh $L /tmp/f > $OUT/formats.txt 2>&1
echo "formats rc=$?"; sed -n '/---- table/,$p' $OUT/formats.txt
$L synth --preset tiny-moe --seed 3 -o /tmp/f/tiny-moe.gguf -q
timeout 120 $L measure /tmp/f/tiny-moe.gguf --knobs-json '{"numerics":"dequant","fuse_norm":true}' \
  --knobs-json '{"numerics":"int8","gemv_prequant":true,"fuse_norm":true,"pdl":true}' --verify --workload 64,16 --repeat 1 \
  --cache /tmp/f/cache > $OUT/moe.txt 2>&1; echo "moe rc=$?"; grep -E "valid|INVALID" $OUT/moe.txt | cut -c1-200
for P in llama-3.1-8b qwen3-0.6b; do
  TYPE=q4_k_m KNOBS="$B" timeout 200 bash bench/ab_decode.sh /tmp/o/lane-tune $L /tmp/ab $P 2>&1 | tee $OUT/ab-$P.txt | grep "===="
done
TYPE=q4_k_m KNOBS="$B" timeout 90 bash bench/ncu_kernels.sh $L /tmp/n llama-3.1-8b 'lk_add_rmsnorm<(true|false), true>' 2 > $OUT/ncu-norm.txt 2>&1
TYPE=q4_k_m KNOBS="$B" SKIP=64 timeout 120 bash bench/ncu_kernels.sh $L /tmp/n llama-3.1-8b 'lk_gemv_glu|lk_gemv<' 4 > $OUT/ncu-gemv.txt 2>&1
TYPE=q4_k_m KNOBS="${B%\}},\"attn_splits\":32}" CONTEXT=33024 DEPTH=32768 timeout 200 bash bench/ncu_kernels.sh $L /tmp/n llama-3.1-8b 'lk_attention_mma<.*true>' 2 > $OUT/ncu-attn.txt 2>&1
for f in norm gemv attn; do echo "---- ncu $f"; grep -E "ncu rc|^  [a-z]|Duration|DRAM Through|Achieved Occ|Registers Per" $OUT/ncu-$f.txt | cut -c1-160 | head -30; done
