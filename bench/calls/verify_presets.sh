# Sourced by the device calls' scripts after prelude.sh: `verify_presets LIMIT KNOBS_JSON...` runs `measure --verify`
# (the CPU reference: tokens, logits within the numerics' bound, --stagger bit for bit) of the knob sets on tiny-qwen3
# (NeoX rope with the per-head norm), tiny-llama in llama.cpp's Q4_K_M mix (adjacent pairs) and tiny-gpt-oss (sinks, a
# sliding window, YaRN), a 200-token prompt then 16 tokens; a line a preset, the failures after it, the tables in $OUT.
# VERIFY_PRESETS names other PRESET:TYPE pairs (such as "tiny-llama:q5_k_m tiny-qwen3:q4_1").
verify_presets() {
  local limit=$1; shift
  local K=(); for k in "$@"; do K+=(--knobs-json "$k"); done
  local W=/tmp/v PT P T F
  mkdir -p $W
  for PT in ${VERIFY_PRESETS:-tiny-qwen3:q8_0 tiny-llama:q4_k_m tiny-gpt-oss:q8_0}; do
    P=${PT%%:*}; T=${PT##*:}; F=$W/$P-$T.gguf
    [ -f $F ] || $L synth --preset $P --type $T --seed 3 -o $F -q
    timeout "$limit" $L measure $F "${K[@]}" --verify --workload 200,16 --repeat 1 --cache $W/cache > $W/$P.measure \
      2> $W/$P.err
    echo "$P $T: $(grep -cE '^ +[0-9]+ +verified ' $W/$P.measure) of $# verified"
    grep -E '^ +[0-9]+ +(failed|screened) ' $W/$P.measure | cut -c1-300 | head -4
    [ -s $W/$P.measure ] || tail -3 $W/$P.err
    cp $W/$P.measure $OUT/ 2>/dev/null
  done
}

# `[LAYERS=N] verify_real TAG PRESET TYPE "LENS" LIMIT KNOBS_JSON...`: `measure --verify` of the knob sets on a
# preset's shape (synthesized, seed 3; its first N layers with LAYERS) on random prompts of the given lengths (8 tokens
# generated each); a line saying how many verified, the table's last lines, the table in $OUT/TAG.measure.
verify_real() {
  local tag=$1 preset=$2 type=$3 lens=$4 limit=$5; shift 5
  local K=(); for k in "$@"; do K+=(--knobs-json "$k"); done
  local W=/tmp/v
  local F=$W/$preset-$type${LAYERS:+-${LAYERS}l}.gguf
  mkdir -p $W
  [ -f $F ] || $L synth --preset $preset --type $type --seed 3 ${LAYERS:+--layers $LAYERS} -o $F -q
  local vocab
  vocab=$($L inspect $F --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["hyperparameters"]["vocab"])')
  python3 -c "
import random; r = random.Random(5)
for n in ($(echo $lens | tr ' ' ,),): print(8, ' '.join(str(r.randrange($vocab)) for _ in range(n)))" > $W/$tag.prompts
  timeout "$limit" $L measure $F "${K[@]}" --verify --prompts $W/$tag.prompts --repeat 1 \
    --cache $W/c > $OUT/$tag.measure 2> $OUT/$tag.err
  echo "$preset $type: $(grep -cE ' verified ' $OUT/$tag.measure) of $# verified"
  cut -c1-170 $OUT/$tag.measure | tail -$(($# + 1))
  [ -s $OUT/$tag.measure ] || tail -5 $OUT/$tag.err
}

# Eight knob sets over a dense model's forms (sessions 42-43's new architectures): dequant, precise with one split, int8
# with chunks of 64 and side streams, int8x2 at 4 splits, the int8 copies with every fused launch, the tensor-core step
# attention with the GLU's groups, gemm_half chunks of 256 with pdl_first, dequant over the q8_0 cache by lanes.
DENSE_SETS=('{"numerics":"dequant"}'
  '{"numerics":"precise","attn_splits":1}'
  '{"numerics":"int8","max_chunk":64,"fuse_qkv":true,"side_streams":true}'
  '{"numerics":"int8x2","max_chunk":16,"attn_splits":4}'
  '{"numerics":"int8","gemv_prequant":true,"gemm_prequant":true,"max_chunk":64,"fuse_qkv":true,"fuse_rope_kv":true,"fuse_rope":true,"fuse_glu":true}'
  '{"numerics":"int8","gemv_prequant":true,"kv_cache":"f16","attn_mma":2,"fuse_qkv":true,"fuse_rope_kv":true,"attn_splits":2,"max_chunk":64,"pdl":true,"fuse_glu":true,"glu_groups":true}'
  '{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","attn_mma":1,"max_chunk":256,"pdl":true,"pdl_first":true,"fuse_glu":true}'
  '{"numerics":"dequant","kv_cache":"q8_0","attn_lanes":true,"max_chunk":16}')
