# Sourced by session 45's calls after prelude.sh: the GPU's name printed, the build before (.carry-old, or OLD_CARRY's
# folder, where carried) unpacked into /tmp/old, and the knob sets they time and verify. REC: the 8B's record prefill
# set (int8, gemm_half in chunks of 512, the fused launches); R06: qwen3-0.6b's (glu_groups); Q8: one for q8_0 files (no
# Q6_K or glu_groups knobs); X2: int8x2 in chunks of 256 (lk_gemm_h's shapes); DQ: dequant over a bf16 cache.
# (R06 lacks gemv_short, which the tuner's priors for small models have: +3.4% on the 0.6B's decode, session 46's call 3;
# session 46's scripts time R06S = R06 + gemv_short as the 0.6B's record.)
REC='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"pdl_first":true,"fuse_glu":true,"fuse_qkv":true,"fuse_qkv_mixed":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":16,"gemv_rows_per_warp":2,"gemv_rows_q6_k":2,"gemv_split":2,"gemv_warps":4}'
R06='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"pdl_first":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1,"glu_groups":true}'
Q8='{"numerics":"int8","gemm_half":true,"gemv_prequant":true,"kv_cache":"f16","max_chunk":512,"pdl":true,"fuse_glu":true,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":4}'
X2='{"numerics":"int8x2","gemm_half":true,"kv_cache":"f16","max_chunk":256,"fuse_qkv":true,"fuse_rope_kv":true,"attn_mma":2,"attn_splits":1}'
DQ='{"numerics":"dequant","gemm_half":true,"kv_cache":"bf16","max_chunk":512,"fuse_qkv":true,"attn_mma":1}'
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p /tmp/old /tmp/ab
[ -f ${OLD_CARRY:-.carry-old}/bundle.tar.xz ] && tar xJf ${OLD_CARRY:-.carry-old}/bundle.tar.xz -C /tmp/old

# The records' sets A/B'd on Q4_K_M files, A the old build (/tmp/old) against B the tree's, each run
# PRESET:DEPTH[:SET[:ROUNDS]] (decode timed after DEPTH tokens; under the knob set in the variable SET, by default R06S
# for the 0.6B and REC for the others; ROUNDS processes each, default 3); the summaries appended to $OUT/ab.txt.
# usage: ab_records PRESET:DEPTH[:SET[:ROUNDS]]...
R06S=${R06%\}},\"gemv_short\":true}
ab_records() {
  local run P D S N K
  for run in "$@"; do
    IFS=: read -r P D S N <<< "$run"
    K="$REC"; [ $P = qwen3-0.6b ] && K="$R06S"; [ -n "$S" ] && K="${!S}"
    echo "== $P decode after $D${S:+ ($S)}"
    TYPE=q4_k_m ROUNDS=${N:-3} PREFILL=512 AB_DECODE_AT=$D AB_PROMPT_LENS="5 600" KNOBS="$K" timeout 170 \
      bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab $P 2>&1 | grep -E "====|BUILD_FAIL" | tail -4 | tee -a $OUT/ab.txt
  done
}
