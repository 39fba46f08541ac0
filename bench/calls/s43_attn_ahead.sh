#!/usr/bin/env bash
# Prepared in session 43 (~4 minutes; carry .carry (this tree) and .carry-old (3e10f85, the kernels before)):
# the decode attention of heads 256 wide (the gemmas: no tensor-core attention) with its cache loads in flight
# together. Session 43's profile of gemma2-2b Q4_K_M on an H100 (512-token prompt, then 64): the attention 122 us a
# layer (72% of the step) at 4 splits in lk_attention, 39.6 us with attn_lanes at 8 splits (46%): each position's (or
# each 8-value piece's) cache rows a dependent round trip. Now unrolled (lk_attention: 2 positions; lk_attention_lanes:
# 4 key pieces, 4 positions' values), the sums in the same order. Prediction: the same logits bit for bit (the hash),
# the attention 122 -> ~65 us and 39.6 -> ~15 us a layer, decode 4.69 -> ~3.2 ms and 2.24 -> ~1.6 ms; the new
# kernels judged by the CPU reference (both verified: tokens, logits within the bound, --stagger bit for bit).
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/old && tar xJf .carry-old/bundle.tar.xz -C /tmp/old
mkdir -p /tmp/v
$L synth --preset gemma2-2b --type q4_k_m --seed 3 -o /tmp/v/g2.gguf -q
A='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_splits":4}'
B='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_splits":8,"attn_lanes":true}'
for who in old new; do
  B_=$L; [ $who = old ] && B_=/tmp/old/lane-tune
  timeout 140 $B_ measure /tmp/v/g2.gguf --knobs-json "$A" --knobs-json "$B" --verify --workload 512,64 --repeat 3 --profile \
    --json --cache /tmp/v/c > $OUT/ab-$who.json 2> $OUT/ab-$who.err
  python3 - "$who" $OUT/ab-$who.json <<'PY'
import json, sys
for line in open(sys.argv[2]):
    if not line.strip().startswith('{'): continue
    j = json.loads(line); p = j.get('profile') or {}
    att = [l['us'] for l in p.get('launches', []) if l.get('rows') == 1 and l['kind'] == 'attention']
    kn = j.get('knobs') or {}
    kn = json.loads(kn) if isinstance(kn, str) else kn
    lanes = 'lanes8' if kn.get('attn_lanes') else 'plain4'
    print(f"{sys.argv[1]:3s} {lanes}: {j.get('verdict')} decode {j.get('decode_ms', 0):.3f} ms prefill(512) "
          f"{j.get('prefill_ms', 0):.2f} ms attention {sum(att) / max(1, len(att)):.1f} us a layer hash {j.get('logits_hash', '-')}")
PY
done
