// Kernel shapes that both sides compute: the compiler's lowering includes this file as C++ to size its launches, and
// every lane embeds it before the kernels, which lay out their shared memory by the same functions. Plain constexpr
// integer arithmetic, valid C++ and CUDA alike: a shape changed here changes both.
#ifndef LK_SHAPES_CUH
#define LK_SHAPES_CUH

#if defined(__CUDACC__)
#define LK_SHAPE constexpr __host__ __device__
#else
#define LK_SHAPE constexpr
#endif

// lk_attention: LK_ATTN_WARPS warps a block, each walking every LK_ATTN_WARPS-th position; the dynamic shared memory
// holds the warps' partials, m and l [warps][G] then the values [warps][G][32 VPER], of `acc` bytes each (lk_acc).
#define LK_ATTN_WARPS 4
LK_SHAPE unsigned long long lk_attention_smem(unsigned long long acc, int g, int vper) {
  return acc * (2ull * LK_ATTN_WARPS * g + LK_ATTN_WARPS * 32ull * g * vper);
}

// lk_gemm_i8t (gemm_tile): a block of LK_GT_WARPS warps takes LK_GT_WEIGHT_ROWS weight rows (GLU: half of them gate,
// half up) by BN activation rows; stages of LK_GT_BLOCKS 32-blocks, LK_GT_STAGES of them in flight. A stage holds the
// weight rows (LK_GT_ROW bytes each: 128 and 16 more, so that ldmatrix's 8 rows fall on distinct banks), the
// activation rows of each of the `words` words, the weight scales (16 bytes a row: the f16 pairs that cover its 4,
// from the even one at or before the first) and the activation scales (4 f32 a row and word).
#define LK_GT_WARPS 4
#define LK_GT_WEIGHT_ROWS 64
#define LK_GT_BLOCKS 4
#define LK_GT_STAGES 3
#define LK_GT_ROW 144
LK_SHAPE int lk_gemm_i8t_stage(int words, int bn) {
  return LK_GT_WEIGHT_ROWS * LK_GT_ROW + words * bn * LK_GT_ROW + LK_GT_WEIGHT_ROWS * 16 + words * bn * 16;
}
LK_SHAPE int lk_gemm_i8t_smem(int words, int bn) {
  return LK_GT_STAGES * lk_gemm_i8t_stage(words, bn);
}
// A block's output rows: all its weight rows, or under GLU half of them.
LK_SHAPE int lk_gemm_i8t_outputs(bool glu) {
  return glu ? LK_GT_WEIGHT_ROWS / 2 : LK_GT_WEIGHT_ROWS;
}

#endif
