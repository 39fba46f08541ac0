#!/usr/bin/env bash
# Session 44 (~4 minutes; carry .carry (the tree) and .carry-old (71a90e0: the step's wide block of 4 warps)): the
# decode step's tensor-core attention for heads 256 wide as 2 x 4 warps (each half of the warps half of the value
# columns, the scores computed by both halves) against 4 warps holding every column. The same sums: the logits' hashes
# must be equal. First the new kernels judged by the CPU reference on drawn-size gemma2 / gemma3 shapes with heads 256
# wide (window 16, prompts past it). Prediction: the hashes equal; the step's attention with rope 9.2 / 11.1 us a layer
# (gemma2-2b / gemma3-1b after 5 tokens) -> ~7 / ~8.5; decode +3-6%.
set -u
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
mkdir -p /tmp/old /tmp/v && tar xJf .carry-old/bundle.tar.xz -C /tmp/old
W1='{"numerics":"int8","gemv_prequant":true,"kv_cache":"f16","attn_mma":2,"fuse_qkv":true,"fuse_rope_kv":true,"attn_splits":2,"max_chunk":64,"pdl":true,"fuse_glu":true}'
W3='{"numerics":"int8x2","kv_cache":"f16","attn_mma":2,"attn_splits":1,"max_chunk":512,"gemm_half":true,"fuse_rope_kv":true}'
W5='{"numerics":"dequant","kv_cache":"bf16","attn_mma":2,"attn_splits":3,"max_chunk":16}'
$L synth --shape '{"architecture":"gemma2","name":"wide-gemma2","layers":2,"d_model":512,"heads":8,"kv_heads":4,"head_dim":256,"ffn":1024,"vocab":640,"context":4096,"tied_output":true,"sliding_window":16,"attn_softcap":5,"final_softcap":5}' --type q8_0 --seed 3 -o /tmp/v/wide-gemma2-q8_0.gguf -q
$L synth --shape '{"architecture":"gemma3","name":"wide-gemma3","layers":2,"d_model":512,"heads":4,"kv_heads":1,"head_dim":256,"ffn":1024,"vocab":640,"context":4096,"tied_output":true,"qk_norm":true,"sliding_window":16,"sliding_pattern":2,"rope_scale_factor":8}' --type q4_k_m --seed 3 -o /tmp/v/wide-gemma3-q4_k_m.gguf -q
verify_real wide-g2 wide-gemma2 q8_0 "5 200" 60 "$W1" "$W3" "$W5"
verify_real wide-g3 wide-gemma3 q4_k_m "5 200" 60 "$W1" "$W3" "$W5"
S4='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":4}'
S1='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1}'
for P in gemma2-2b gemma3-1b; do
  F=/tmp/v/$P-full.gguf
  [ -f $F ] || $L synth --preset $P --type q4_k_m --seed 1 -o $F -q
  for round in 1 2; do
    for who in old new; do
      B_=$L; [ $who = old ] && B_=/tmp/old/lane-tune
      for WL in 5,128 512,64; do
        timeout 60 $B_ measure $F --knobs-json "$S4" --knobs-json "$S1" --workload $WL --repeat 3 --profile --json \
          --cache /tmp/v/c-$who > /tmp/v/ab.json 2> /dev/null
        python3 - "$P $who r$round $WL" /tmp/v/ab.json <<'PY'
import json, sys
for line in open(sys.argv[2]):
    if not line.strip().startswith('{'): continue
    j = json.loads(line); p = j.get('profile') or {}
    kn = j.get('knobs') or {}
    kn = json.loads(kn) if isinstance(kn, str) else kn
    step = [l for l in p.get('launches', []) if l.get('rows') == 1]
    att = sum(l['us'] for l in step if l['kind'].startswith('attention'))
    n = sum(1 for l in step if l['kind'].startswith('attention'))
    print(f"{sys.argv[1]:28s} splits {kn.get('attn_splits')}: decode {j.get('decode_ms', 0):.4f} ms "
          f"attention {att / max(n, 1):.2f} us a layer  hash {j.get('logits_hash', '-')}")
PY
      done
    done
  done
done
