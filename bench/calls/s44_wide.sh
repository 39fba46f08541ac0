#!/usr/bin/env bash
# Session 44 (~9 minutes; carry .carry rebuilt at the tree and .llama/src.tar.xz): the tensor-core attention for heads
# 256 wide (the gemmas'; attn_mma took at most 128 before: kernels/attention_mma.cuh reads such a head's queries from
# shared memory at each use, and the decode step's block is 4 warps, each a quarter of each tile). First judged by the
# CPU reference on the GPU (`measure --verify`: tokens, logits within the bound, --stagger bit for bit): drawn-size
# gemma2 and gemma3 shapes with heads 256 wide and windows of 16 (prompts past them), then gemma2-2b's and gemma3-1b's
# widths in 2 layers (Q4_K_M; prompts of 5 and 700). Then the full gemma2-2b and gemma3-1b Q4_K_M, the session's
# earlier side-by-side set (attn_lanes at 8 splits) against attn_mma 2 at 1 and 4 splits (--workload 512,64: prefill(512)
# and the decode after it). Prediction: all verified; decode attention (lanes 11.1-13.9 us a layer + 3 us fold + 2.6 us
# rope_kv) -> ~5-6 us a layer with rope folded in: gemma2-2b decode 1.44 -> ~1.2 ms, gemma3-1b 1.18 -> ~0.85 ms;
# prefill(512) attention 180 / 117 -> ~40 / ~30 us a layer: prefill 1.15-1.3x.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
[ -x /tmp/llama-bench ] || (bash bench/llama_build.sh .llama/src.tar.xz /tmp/lb /tmp/llama-bench > $OUT/llama_build.txt 2>&1) &
W1='{"numerics":"int8","gemv_prequant":true,"kv_cache":"f16","attn_mma":2,"fuse_qkv":true,"fuse_rope_kv":true,"attn_splits":2,"max_chunk":64,"pdl":true,"fuse_glu":true}'
W2='{"numerics":"dequant","kv_cache":"bf16","attn_mma":1,"max_chunk":64}'
W3='{"numerics":"int8x2","kv_cache":"f16","attn_mma":2,"attn_splits":1,"max_chunk":512,"gemm_half":true,"fuse_rope_kv":true}'
W4='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":4}'
mkdir -p /tmp/v
$L synth --shape '{"architecture":"gemma2","name":"wide-gemma2","layers":2,"d_model":512,"heads":8,"kv_heads":4,"head_dim":256,"ffn":1024,"vocab":640,"context":4096,"tied_output":true,"sliding_window":16,"attn_softcap":5,"final_softcap":5}' --type q8_0 --seed 3 -o /tmp/v/wide-gemma2-q8_0.gguf -q
$L synth --shape '{"architecture":"gemma3","name":"wide-gemma3","layers":2,"d_model":512,"heads":4,"kv_heads":1,"head_dim":256,"ffn":1024,"vocab":640,"context":4096,"tied_output":true,"qk_norm":true,"sliding_window":16,"sliding_pattern":2,"rope_scale_factor":8}' --type q4_k_m --seed 3 -o /tmp/v/wide-gemma3-q4_k_m.gguf -q
verify_real wide-g2 wide-gemma2 q8_0 "5 200" 90 "$W1" "$W2" "$W3" "$W4"
verify_real wide-g3 wide-gemma3 q4_k_m "5 200" 90 "$W1" "$W2" "$W3" "$W4"
$L synth --preset gemma2-2b --layers 2 --type q4_k_m --seed 3 -o /tmp/v/gemma2-2b2-q4_k_m.gguf -q
$L synth --preset gemma3-1b --layers 2 --type q4_k_m --seed 3 -o /tmp/v/gemma3-1b2-q4_k_m.gguf -q
verify_real g2-2b gemma2-2b2 q4_k_m "5 700" 120 "$W1" "$W4"
verify_real g3-1b gemma3-1b2 q4_k_m "5 700" 120 "$W1" "$W4"
A='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_splits":8,"attn_lanes":true}'
B='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1}'
for P in gemma2-2b gemma3-1b; do
  F=/tmp/v/$P-full.gguf
  $L synth --preset $P --type q4_k_m --seed 1 -o $F -q
  timeout 150 $L measure $F --knobs-json "$A" --knobs-json "$B" --knobs-json "$W4" --verify --workload 512,64 --repeat 3 \
    --profile --json --cache /tmp/v/c > $OUT/ab-$P.json 2> $OUT/ab-$P.err
  python3 - $P $OUT/ab-$P.json <<'PY'
import json, sys
for line in open(sys.argv[2]):
    if not line.strip().startswith('{'): continue
    j = json.loads(line); p = j.get('profile') or {}
    kn = j.get('knobs') or {}
    kn = json.loads(kn) if isinstance(kn, str) else kn
    form = f"mma{kn.get('attn_mma', 0)}x{kn.get('attn_splits')}" if kn.get('attn_mma') else f"lanes{kn.get('attn_splits')}"
    step = [l for l in p.get('launches', []) if l.get('rows') == 1]
    att = sum(l['us'] for l in step if l['kind'].startswith('attention') or l['kind'] == 'rope_kv')
    chunk = [l for l in p.get('launches', []) if l.get('rows', 1) > 1 and l['kind'].startswith('attention')]
    print(f"{sys.argv[1]} {form:8s}: {j.get('verdict')} decode {j.get('decode_ms', 0):.3f} ms prefill(512) "
          f"{j.get('prefill_ms', 0):.2f} ms; step attention+rope {att:.0f} us, chunk attention {sum(l['us'] for l in chunk):.0f} us")
PY
  tail -2 $OUT/ab-$P.err | cut -c1-200
done
