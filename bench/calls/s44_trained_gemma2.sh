#!/usr/bin/env bash
# Session 44 (~5 minutes; carry .carry): the tensor-core attention for heads 256 wide judged on trained weights (#18:
# a trained checkpoint's correctness for every new variant). gemma2-2b's first 4 layers (heads 256 wide, caps 50 / 30)
# trained 30 s on local text (bench/train_checkpoint.py: transformers' Gemma2ForCausalLM, check_transformers.py's
# mapping), in q8_0 and requantized to Q4_K_M; `measure --verify` on prompts of the training text (40, 300, 1,200
# tokens, 16 generated each): attn_lanes (before) and attn_mma 2 at 1 and 4 splits (int8, int8x2, dequant over bf16).
# Prediction: every set verified, tokens agreeing with the reference on the trained margins.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/w
timeout 150 python3 bench/train_checkpoint.py $L gemma2-2b /tmp/w/g.gguf --layers 4 --seconds 30 --type f16 > $OUT/train.log 2>&1
echo "train rc=$?"; grep -iE "loss" $OUT/train.log | tail -2; tail -1 $OUT/train.log
timeout 60 $L quantize /tmp/w/g.gguf --type q8_0 -o /tmp/w/g8.gguf -q
timeout 60 $L quantize /tmp/w/g.gguf --type q4_k_m -o /tmp/w/g4.gguf -q
text_prompts /tmp/w/g.gguf.text 9 16 40 300 1200 > /tmp/w/prompts
K=(--knobs-json '{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_splits":8,"attn_lanes":true}'
   --knobs-json '{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":4}'
   --knobs-json '{"numerics":"int8x2","kv_cache":"f16","attn_mma":2,"attn_splits":1,"max_chunk":256,"gemm_half":true,"fuse_rope_kv":true}'
   --knobs-json '{"numerics":"dequant","kv_cache":"bf16","attn_mma":1,"max_chunk":64}')
for F in g8 g4; do
  timeout 110 $L measure /tmp/w/$F.gguf "${K[@]}" --verify --prompts /tmp/w/prompts --repeat 1 --cache /tmp/w/c > $OUT/$F.measure 2> $OUT/$F.err
  echo "$F: $(grep -cE ' verified ' $OUT/$F.measure) of 4 verified"; cut -c1-170 $OUT/$F.measure | tail -5
  [ -s $OUT/$F.measure ] || tail -5 $OUT/$F.err
done
