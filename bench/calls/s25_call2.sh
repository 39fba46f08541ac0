#!/usr/bin/env bash
# Session 25, call 2 (~9 minutes; carry .carry = this tree's build): the decode step's attention folding its own
# splits (lk_attention_mma's STEP shape with a count a key/value head: the last split's block merges, no Fold launch;
# session 23's profile after a 512-token prompt: attention 7.4-7.8 us a layer with one split, 8 blocks in all), and
# lk_gemm_w's Q4_K unpacked straight to f16 (call 1: q 70.5 -> 63.7 us, down 227.7 -> 204.3).
# 1. bench/attention_bench.cu (graph-timed now): mma (splits then lk_attention_fold) against mmafold, decode rows.
# 2. Correctness on trained checkpoints (bench/train_checkpoint.py, a byte a token, real margins), the record's set
#    with chunks of 512 and 8 splits: llama-3.1-8b's first 2 layers in Q4_K_M (its 512-row chunks on lk_gemm_w with the
#    direct Q4_K unpacking; prompts of 40 and 700) and qwen3-0.6b in Q4_K_M (40, 300, 1,200): `measure --verify`.
# 3. qwen3-0.6b Q4_K_M A/B/C, decode after a 512-token prompt: attn_splits 1 / 4 / 8.
# Prediction: mmafold at depth 512 ~2.5-3 us with 8 splits against mma's 1 split ~6-7 us; all verified; the 0.6B's
# decode 1,444 -> 1,700-1,850 tok/s at 8 splits.
set -u
. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":512,"attn_splits":1}'
B4=${B/\"attn_splits\":1/\"attn_splits\":4}
B8=${B/\"attn_splits\":1/\"attn_splits\":8}
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o /tmp/attn bench/attention_bench.cu > /tmp/attn.log 2>&1 &
ATTN=$!
# 2. The trained checkpoints (the training runs while the bench builds).
W=/tmp/w; mkdir -p $W
prompts() {  # FILE LEN...: prompts of the training text's bytes, 12 tokens generated each
  local f=$1; shift
  python3 - $W/$f.gguf.text "$@" > $W/$f.prompts <<'PY'
import sys, random
b = open(sys.argv[1], "rb").read()
r = random.Random(9)
for n in map(int, sys.argv[2:]):
    at = r.randrange(0, len(b) - n)
    print(12, " ".join(str(x) for x in b[at:at + n]))
PY
}
timeout 100 python3 bench/train_checkpoint.py $L llama-3.1-8b $W/l2.gguf --layers 2 --seconds 30 --type f16 > $OUT/train-8b.log 2>&1
echo "train 8B (2 layers) rc=$? $(grep -i loss $OUT/train-8b.log | tail -1)"
timeout 60 $L quantize $W/l2.gguf --type q4_k_m -o $W/l2q.gguf -q && cp $W/l2.gguf.text $W/l2q.gguf.text
prompts l2q 40 700
timeout 200 $L measure $W/l2q.gguf --knobs-json "$B8" --verify --prompts $W/l2q.prompts --repeat 1 --cache $W/c8 \
  > $OUT/l2.measure 2> $OUT/l2.err
echo "trained 8B (2 layers) q4_k_m: $(grep -cE ' verified ' $OUT/l2.measure) verified"; cut -c1-220 $OUT/l2.measure | tail -4
[ -s $OUT/l2.measure ] || tail -5 $OUT/l2.err
wait $ATTN; echo "attention_bench build rc=$?"
for k in mma mmafold; do timeout 60 /tmp/attn $k 2>&1 | tee $OUT/attn-$k.txt | awk '$2 == 1'; done
timeout 60 python3 bench/train_checkpoint.py $L qwen3-0.6b $W/q.gguf --seconds 25 --type f16 > $OUT/train-06.log 2>&1
echo "train 0.6B rc=$? $(grep -i loss $OUT/train-06.log | tail -1)"
timeout 60 $L quantize $W/q.gguf --type q4_k_m -o $W/qq.gguf -q && cp $W/q.gguf.text $W/qq.gguf.text
prompts qq 40 300 1200
timeout 150 $L measure $W/qq.gguf --knobs-json "$B8" --verify --prompts $W/qq.prompts --repeat 1 --cache $W/c6 \
  > $OUT/q06.measure 2> $OUT/q06.err
echo "trained 0.6B q4_k_m: $(grep -cE ' verified ' $OUT/q06.measure) verified"; cut -c1-220 $OUT/q06.measure | tail -4
[ -s $OUT/q06.measure ] || tail -5 $OUT/q06.err
# 3. The 0.6B's decode at positions 512-640 by splits.
TYPE=q4_k_m KNOBS_A="$B" KNOBS="$B4" KNOBS_C="$B8" PREFILL="512" AB_DECODE_AT=512 AB_PROMPT_LENS="5 600" ROUNDS=3 \
  timeout 150 bash bench/ab_decode.sh $L $L /tmp/ab qwen3-0.6b 2>&1 | tee $OUT/ab-06.txt | grep "===="
