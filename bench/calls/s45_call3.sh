#!/usr/bin/env bash
# Session 45 (~7 minutes; carry .carry (this tree) and .carry-old (6f711ce)): the grouped q/k/v GEMM again, now with
# only the tiles past its whole waves split along k (lk_gemm_tail_split: the 8B's 192 tiles = 132 whole + 60 in two
# parts, q/k's 160 = 132 + 28 in four) and a split tile's parts summed with their loads in flight (call 2: the split
# fixup's 64 x 2 dependent L2 trips cost ~100 us a launch). Prediction: the 8B's q/k/v 150.6 -> ~115 us a layer,
# prefill(512) +3-4%; the 0.6B +8% as in call 2 (its groups do not split); decode unchanged. Then the new kernels
# verified on synthesized shapes (the 8B's 3 layers: lk_gemm_w_parts and lk_gemm_h_parts with their tails split;
# qwen2.5-7b's 2 layers with q/k/v biases; qwen3-0.6b's 2 layers).
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p /tmp/old /tmp/ab && tar xJf .carry-old/bundle.tar.xz -C /tmp/old
REC='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"pdl_first":true,"fuse_glu":true,"fuse_qkv":true,"fuse_qkv_mixed":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":16,"gemv_rows_per_warp":2,"gemv_rows_q6_k":2,"gemv_split":2,"gemv_warps":4}'
R06='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"pdl_first":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1,"glu_groups":true}'
Q8='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":4}'
X2='{"numerics":"int8x2","gemm_half":true,"kv_cache":"f16","max_chunk":256,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1}'
for P in llama-3.1-8b qwen3-0.6b; do
  K="$REC"; [ $P = qwen3-0.6b ] && K="$R06"
  TYPE=q4_k_m ROUNDS=3 PREFILL=512 KNOBS="$K" timeout 200 bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab $P 2>&1 |
    grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
  echo "($(( $(date +%s) - T0 )) s)"
done
prof() {  # prof WHO BINARY FILE KNOBS
  timeout 100 $2 measure $3 --knobs-json "$4" --workload 512,16 --repeat 3 --profile --json --cache /tmp/ab/c-$1 \
    > /tmp/ab/prof.json 2> /tmp/ab/prof.err
  python3 - "$1 $(basename $3)" /tmp/ab/prof.json <<'PY' | tee -a $OUT/profiles.txt
import json, sys, collections
for line in open(sys.argv[2]):
    if not line.strip().startswith('{'): continue
    j = json.loads(line); p = j.get('profile') or {}
    by = collections.defaultdict(lambda: [0, 0.0])
    for l in p.get('launches', []):
        if l.get('rows') == 512: by[l['kind']][0] += 1; by[l['kind']][1] += l['us']
    tot = sum(v[1] for v in by.values())
    print(f"{sys.argv[1]}: prefill(512) {j.get('prefill_ms', 0):.2f} ms {j.get('failure','')} {j.get('reason','')[:200]}; chunk {tot:.0f} us: " +
          ", ".join(f"{k} {v[1]/max(v[0],1):.1f} x {v[0]}" for k, v in sorted(by.items(), key=lambda e: -e[1][1])[:7]))
PY
  [ -s /tmp/ab/prof.json ] || tail -3 /tmp/ab/prof.err
}
prof new $L /tmp/ab/llama-3.1-8b-q4_k_m.gguf "$REC"
prof new $L /tmp/ab/qwen3-0.6b-q4_k_m.gguf "$R06"
echo "($(( $(date +%s) - T0 )) s)"
mkdir -p /tmp/v
$L synth --preset llama-3.1-8b --type q4_k_m --layers 3 --seed 3 -o /tmp/v/llama-3.1-8b-q4_k_m.gguf -q
verify_real l8 llama-3.1-8b q4_k_m "700 300" 120 "$REC" "$X2"
$L synth --preset qwen2.5-7b --type q8_0 --layers 2 --seed 3 -o /tmp/v/qwen2.5-7b-q8_0.gguf -q
verify_real q25 qwen2.5-7b q8_0 "600 300" 100 "$Q8" "$X2"
$L synth --preset qwen3-0.6b --type q4_k_m --layers 2 --seed 3 -o /tmp/v/qwen3-0.6b-q4_k_m.gguf -q
verify_real q06 qwen3-0.6b q4_k_m "600 300" 100 "$R06" "$X2"
echo "($(( $(date +%s) - T0 )) s)"
