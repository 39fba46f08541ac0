#!/usr/bin/env bash
# Session 13, call 5: gemm_half in the lane (#16, #18). (1) qwen3-0.6b trained 25 s, as f16, q8_0 and q4_k_m: the
# chunks' GEMMs in f16 against the int8 tiled ones and (f16 checkpoint, dequant) the GEMV slabs, judged by
# `measure --verify` on prompts of the training text up to 2,000 tokens; the workload a 2,048-token prompt then 64
# generated. (2) llama-3.1-8b Q4_K_M side by side with llama-bench (bench/speed.sh): the session-10 best int8 lane
# (gemm_tile 128) and the same with gemm_half.
set -u
. bench/calls/prelude.sh
xz -dc .llama/llama-bench.xz > /tmp/llama-bench && chmod +x /tmp/llama-bench
. bench/calls/trained_qwen3.sh
timeout 30 $L quantize /tmp/w/q.gguf --type q4_k_m -o /tmp/w/q4.gguf -q
I='"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
D='"numerics":"dequant","max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"kv_cache":"f16","attn_mma":2,"attn_splits":16'
run() {  # FILE NAME KNOBS...
  local f=$1 n=$2; shift 2
  local K=(); for k in "$@"; do K+=(--knobs-json "$k"); done
  timeout 200 $L measure $f "${K[@]}" --verify --prompts /tmp/w/prompts --workload 2048,64 --repeat 3 --cache /tmp/w/cache --format json > $OUT/measure-$n.jsonl 2> $OUT/measure-$n.err
  echo "measure $n rc=$?"; tail -2 $OUT/measure-$n.err
}
run /tmp/w/q.gguf f16 "{$D}" "{$D,\"gemm_half\":true}"
run /tmp/w/q8.gguf q8 "{$I,\"gemm_prequant\":true,\"gemm_tile\":128}" "{$I,\"gemm_half\":true}" "{$D,\"gemm_half\":true}"
run /tmp/w/q4.gguf q4km "{$I,\"gemm_prequant\":true,\"gemm_tile\":128,\"gemv_rows_q6_k\":2}" "{$I,\"gemm_half\":true,\"gemv_rows_q6_k\":2}"
python3 - $OUT/measure-*.jsonl <<'PY'
import json, sys
for p in sys.argv[1:]:
    for line in open(p):
        line = line.strip()
        if not line.startswith("{"): continue
        r = json.loads(line)
        k = r.get("knobs", {})
        tag = ("half " if k.get("gemm_half") else "tile " if k.get("gemm_tile") else "slabs ") + k.get("numerics", "")
        print(f'{p.split("measure-")[1][:-6]:5} {tag:14} valid={r.get("valid")} rel_l2={r.get("rel_l2", 0):.3g} prefill_ms={r.get("prefill_ms", 0):.2f} decode_ms={r.get("decode_ms_per_token", 0):.3f} {r.get("reason", "")[:80]}')
PY
B='{"numerics":"int8","gemv_prequant":true,"max_chunk":256,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2'
TYPE=q4_k_m KNOB_SETS="$B,\"gemm_prequant\":true,\"gemm_tile\":128}
$B,\"gemm_half\":true}" timeout 330 bash bench/speed.sh $L /tmp/s /tmp/llama-bench -- llama-3.1-8b > $OUT/speed.txt 2>&1
echo "speed rc=$?"; tail -25 $OUT/speed.txt
