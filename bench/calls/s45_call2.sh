#!/usr/bin/env bash
# Session 45 (~7 minutes; carry .carry (this tree), .carry-old (6f711ce: q, k and v a launch each) and .carry-b (this
# tree with the groups never split)): call 1 found the grouped q/k/v GEMM 0.91x in prefill(512) on the 8B (and the
# worker's kernel modules lacking gemm_half's switch for the new kernels: fixed). Where the chunk's time goes with each
# build (measure --profile, launches of 512 rows by kind, 3 repeats), the 8B Q4_K_M and qwen3-0.6b Q4_K_M; then the
# new build verified on the 8B's first 3 layers (synthesized) and qwen2.5-7b's shape in 2 layers (biases).
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
. bench/calls/verify_presets.sh
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p /tmp/old /tmp/ab && tar xJf .carry-old/bundle.tar.xz -C /tmp/old
REC='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"pdl_first":true,"fuse_glu":true,"fuse_qkv":true,"fuse_qkv_mixed":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":16,"gemv_rows_per_warp":2,"gemv_rows_q6_k":2,"gemv_split":2,"gemv_warps":4}'
R06='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"pdl_first":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1,"glu_groups":true}'
X2='{"numerics":"int8x2","gemm_half":true,"kv_cache":"f16","max_chunk":256,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1}'
$L synth --preset llama-3.1-8b --type q4_k_m --seed 1 -o /tmp/ab/8b.gguf -q &
$L synth --preset qwen3-0.6b --type q4_k_m --seed 1 -o /tmp/ab/06b.gguf -q &
wait
echo "synth ($(( $(date +%s) - T0 )) s)"
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
for r in 1 2; do
  for who in old new c; do
    B_=$L; [ $who = old ] && B_=/tmp/old/lane-tune; [ $who = c ] && B_=/tmp/cb/lane-tune
    prof $who $B_ /tmp/ab/8b.gguf "$REC"
  done
done
echo "($(( $(date +%s) - T0 )) s)"
for who in old new c; do
  B_=$L; [ $who = old ] && B_=/tmp/old/lane-tune; [ $who = c ] && B_=/tmp/cb/lane-tune
  prof $who $B_ /tmp/ab/06b.gguf "$R06"
done
echo "($(( $(date +%s) - T0 )) s)"
mkdir -p /tmp/v
$L synth --preset llama-3.1-8b --type q4_k_m --layers 3 --seed 3 -o /tmp/v/llama-3.1-8b-q4_k_m.gguf -q
verify_real l8 llama-3.1-8b q4_k_m "700 300" 120 "$REC" "$X2"
$L synth --preset qwen2.5-7b --type q8_0 --layers 2 --seed 3 -o /tmp/v/qwen2.5-7b-q8_0.gguf -q
verify_real q25 qwen2.5-7b q8_0 "600 300" 100 "$R06" "$X2"
echo "($(( $(date +%s) - T0 )) s)"
