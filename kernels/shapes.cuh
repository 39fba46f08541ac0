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

// The first position a query row of `len` positions (its own the last, len - 1) attends to: 0, or on a sliding layer
// (window > 0) the first of its last `window` (llama.cpp's LLAMA_SWA_TYPE_STANDARD: p attends p - window + 1 ... p).
// Every attention kernel's splits start there, so a sliding layer's decode reads only its window's positions.
LK_SHAPE int lk_window_first(int len, int window) {
  return window > 0 && len > window ? len - window : 0;
}

// lk_moe_group: LK_MOE_GROUP_THREADS threads; its dynamic shared memory a table of each warp's pairs of each expert,
// then the experts' counts and their total, 4 bytes each.
#define LK_MOE_GROUP_THREADS 1024
LK_SHAPE unsigned long long lk_moe_group_smem(int experts) {
  return 4ull * ((unsigned long long)(LK_MOE_GROUP_THREADS / 32 + 1) * (unsigned long long)experts + 1);
}

// lk_attention: LK_ATTN_WARPS warps a block, each walking every LK_ATTN_WARPS-th position; the dynamic shared memory
// holds the warps' partials, m and l [warps][G] then the values [warps][G][32 VPER], of `acc` bytes each (lk_acc).
#define LK_ATTN_WARPS 4
LK_SHAPE unsigned long long lk_attention_smem(unsigned long long acc, int g, int vper) {
  return acc * (2ull * LK_ATTN_WARPS * g + LK_ATTN_WARPS * 32ull * g * vper);
}
// lk_attention_lanes: the same partials, then the G queries of width hd it scores against.
LK_SHAPE unsigned long long lk_attention_lanes_smem(unsigned long long acc, int g, int vper, int hd) {
  return lk_attention_smem(acc, g, vper) + acc * (unsigned long long)g * hd;
}

// lk_attention_mma (attn_mma): LK_AM_WARPS warps a chunk's block, LK_AM_STEP_WARPS a decode step's; tiles of
// LK_AM_KEYS cached positions arrive in stages. A chunk's block takes 16 query rows a warp, two stages (one in flight
// while the warps compute); a step's (STEP) 16 query rows in all, its warps an eighth of each tile apiece (8
// positions: a warp is one of two an SM scheduler holds, where 4 warps left each scheduler one warp waiting on its own
// instructions' latency), three stages (its reads are the bandwidth's: two in flight), merged at the end. Shared
// memory holds the block's queries [rows][hd + 8] then the stages' keys [LK_AM_KEYS][hd + 8] and values
// [LK_AM_KEYS][vd + 8], 16-bit elements (a row 16 bytes longer than its values, so that ldmatrix's 8 rows fall on
// distinct banks); a step's merge reuses it for the warps' partials, [warps][16] maxima, sums, then [warps][16][vd]
// values, f32.
#define LK_AM_WARPS 4
#ifndef LK_AM_STEP_WARPS
#define LK_AM_STEP_WARPS 8
#endif
#define LK_AM_KEYS 64
static_assert(LK_AM_STEP_WARPS == 4 || LK_AM_STEP_WARPS == 8, "a step's warp takes 16 or 8 positions of a tile");
// (A step's 8 positions a warp take its key and value heads 32 columns an ldmatrix: heads of 48, 80 or 112 keep 4.)
// Heads past 128 wide (the gemmas' 256): a warp's VD / 8 x 4 value sums would pass the 128 registers a thread of 8
// warps has at two blocks an SM, so a step's block there is two halves of the value columns (where key and value
// heads are whole 32-column loads: a block's 8 warps copy a tile's rows in whole rounds), each 4 warps of 16 positions
// a tile: both halves score the same positions (the same scores and softmax, computed twice) and each sums its own
// columns' values, VD / 16 x 4 registers; one block an SM (its stages take 206 KiB of shared memory at 256). The sums
// are those of 4 warps holding every column: the same numbers.
LK_SHAPE bool lk_am_wide(int hd, int vd) {
  return hd > 128 || vd > 128;
}
LK_SHAPE int lk_attention_mma_vsplit(bool step, int hd, int vd) {
  return step && lk_am_wide(hd, vd) && hd % 32 == 0 && vd % 32 == 0 ? 2 : 1;
}
LK_SHAPE int lk_attention_mma_warps(bool step, int hd, int vd) {
  if (step && lk_am_wide(hd, vd)) return LK_AM_WARPS * lk_attention_mma_vsplit(step, hd, vd);
  return step && hd % 32 == 0 && vd % 32 == 0 ? LK_AM_STEP_WARPS : LK_AM_WARPS;
}
// The ways a step's positions are split (a value half's warps): each way's partial is merged at the end.
LK_SHAPE int lk_attention_mma_ways(bool step, int hd, int vd) {
  return lk_attention_mma_warps(step, hd, vd) / lk_attention_mma_vsplit(step, hd, vd);
}
LK_SHAPE int lk_attention_mma_rows(bool step) {
  return step ? 16 : LK_AM_WARPS * 16;
}
LK_SHAPE int lk_attention_mma_stages(bool step) {
  return step ? 3 : 2;
}
LK_SHAPE int lk_attention_mma_smem(int hd, int vd, bool step) {
  const int stages =
      2 * (lk_attention_mma_rows(step) * (hd + 8) + lk_attention_mma_stages(step) * LK_AM_KEYS * (hd + 8 + vd + 8));
  const int w = lk_attention_mma_ways(step, hd, vd);
  const int merge = 4 * w * 16 * (vd + 2) + 8 * 16 * vd;  // (the ways' partials, the output's values)
  return stages > merge ? stages : merge;
}
// The positions a split of the decode step's attention holds where it folds its own splits (a count given): whole
// tiles, ceil(span / splits) rounded up to LK_AM_KEYS, so a row of few positions takes fewer splits (those past its
// positions do nothing; one alone writes the output as with one split). A span of at most LK_AM_FOLD_TILES tiles is
// one split: the fold (every block's fence and count, the last one's merge: ~2.6 us + 0.15 a split on the H100 by
// bench/attention_bench.cu, session 48) costs more than the tiles it spreads (~0.95 us each, a block's loop issue-bound).
// Without the fold, ceil(span / splits).
#ifndef LK_AM_FOLD_TILES
#define LK_AM_FOLD_TILES 4
#endif
LK_SHAPE int lk_am_fold_chunk(int span, int splits) {
  if (span <= LK_AM_FOLD_TILES * LK_AM_KEYS) return LK_AM_FOLD_TILES * LK_AM_KEYS;
  return ((span + splits - 1) / splits + LK_AM_KEYS - 1) / LK_AM_KEYS * LK_AM_KEYS;
}

// lk_add_rmsnorm: a block a row; where the row fits, each thread holds lk_norm_pieces(d, threads) float4s of it in
// registers (a template argument, so that the registers are the pieces the launch uses: session 35's 512-thread norm of
// the 8B's 4,096 took 60 registers for 4 pieces of which it used 2), at most LK_NORM_V; a wider row takes the strided
// loops. (LK_NORM_V also bounds the fused norms, which run in their projection's blocks.)
#define LK_NORM_V 4
LK_SHAPE int lk_norm_pieces(int d, int threads) {
  const int p = (d + 4 * threads - 1) / (4 * threads);
  return p < 1 ? 1 : p > LK_NORM_V ? LK_NORM_V : p;
}

// norm_fold: the spans of the residual whose last block adds, quantizes and sums their squares (a warp of 4 values a
// lane; a sum of squares a 32-group, as norm_fold_groups' blocks of 32 rows write them), and the most spans a row may
// have (kernels/gemv.cuh's counters, lk_span_done).
#define LK_NORM_SPAN 128
#define LK_NORM_SPANS_MAX 1024

// lk_attention_fold: a block a (row, query head); its threads are lk_fold_groups(vd, splits) groups of the head's
// values (up to 256, rounded up to whole warps), each group summing its share of the splits with one round of 16 loads
// in flight a thread (32 splits: 2 groups, 64: 4), the groups' sums then added in order.
LK_SHAPE int lk_fold_groups(int vd, int splits) {
  return vd > 256 ? 1 : splits >= 64 ? 4 : splits >= 32 ? 2 : 1;
}
LK_SHAPE int lk_fold_threads(int vd, int splits) {
  return ((vd < 256 ? vd : 256) + 31) / 32 * 32 * lk_fold_groups(vd, splits);
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

// lk_gemm_i8tb (gemm_tile over a block format): lk_gemm_i8t's block and warps, its activation stages as lk_gemm_i8t
// stages them (LK_GT_STAGES in flight), and the weights of a stage unpacked into int8 rows (LK_GT_ROW bytes, as
// lk_gemm_i8t stages Q8_0's) with 4 f32 a 32-group (its halves' scales and minimums), two such tiles: one filled
// while the other is read.
LK_SHAPE int lk_gemm_i8tb_weights() {
  return LK_GT_WEIGHT_ROWS * LK_GT_ROW + LK_GT_WEIGHT_ROWS * LK_GT_BLOCKS * 16;
}
LK_SHAPE int lk_gemm_i8tb_acts(int words, int bn) {
  return words * bn * LK_GT_ROW + words * bn * 16;
}
LK_SHAPE int lk_gemm_i8tb_smem(int words, int bn) {
  return 2 * lk_gemm_i8tb_weights() + LK_GT_STAGES * lk_gemm_i8tb_acts(words, bn);
}

// lk_gemm_h (gemm_half): a block of LK_GH_WARPS warps takes BM weight rows (128 or 64; GLU: half of them gate, half
// up) by BN activation rows, lk_gemm_h_k(BM) of k a stage (BM x that is one 32-group a thread). Shared memory holds two
// weight tiles (one filled while the other is read) of BM rows of f16, then LK_GH_STAGES stages of BN activation rows
// of f16; a row lk_gemm_h_row(BM) bytes (its values and 16 more, so that ldmatrix's 8 rows fall on distinct banks). Two
// blocks an SM where a thread's sums fit half its registers (BM x BN up to 128 x 128), else one.
#define LK_GH_WARPS 8
#define LK_GH_STAGES 3
LK_SHAPE int lk_gemm_h_k(int bm) {
  return LK_GH_WARPS * 32 * 32 / bm;
}
LK_SHAPE int lk_gemm_h_row(int bm) {
  return 2 * lk_gemm_h_k(bm) + 16;
}
// The dynamic shared memory of an lk_gemv_glu launch: under its joint rounds (a block format, the int8 numerics'
// `words` words an activation, one row a warp, one activation row) over the int8 copy (`copy`) the block stages the
// copy's row, `words` words of k codes and k / 32 f32 scales (kernels/gemv.cuh's lk_xq_stage); else none.
// (lk_xq_stage_smem: the staged row's bytes, which lk_gemv_glu_group stages the same way at any rows a warp)
LK_SHAPE unsigned long long lk_xq_stage_smem(int words, unsigned long long k) {
  return (unsigned long long)words * k * 9 / 8;
}
LK_SHAPE unsigned long long lk_gemv_glu_smem(bool block, int words, int rpw, int rows, bool copy, unsigned long long k) {
  return block && words > 0 && rpw == 1 && rows == 1 && copy ? lk_xq_stage_smem(words, k) : 0;
}
LK_SHAPE int lk_gemm_h_outputs(bool glu, int bm) {
  return glu ? bm / 2 : bm;
}
LK_SHAPE int lk_gemm_h_smem(int bm, int bn) {
  return (2 * bm + LK_GH_STAGES * bn) * lk_gemm_h_row(bm);
}
LK_SHAPE int lk_gemm_h_blocks(int bm, int bn) {
  return bm * bn <= 128 * 128 ? 2 : 1;
}
// The stages whose weights a thread holds in registers ahead of their unpacking: a tile of few activation rows waits
// on its weights' loads more, so it keeps three stages' in flight. Measured on a mixture's grouped experts
// (bench/moe_gemm_bench.cu, session 17): 3-4% faster than one; the plain GEMM's 64-row tiles take it untimed.
LK_SHAPE int lk_gemm_h_prefetch(int bn) {
  return bn <= 64 ? 3 : 1;
}
// Its stages over k columns.
LK_SHAPE int lk_gemm_h_stages(int k, int bm) {
  return (k / 32 + lk_gemm_h_k(bm) / 32 - 1) / (lk_gemm_h_k(bm) / 32);
}
// A grid of `tiles` output tiles too small to fill the GPU (`slots` blocks at once) splits along k: the ways doubled, up
// to 4, while the blocks still fit at once and each part keeps 6 stages or more (a block's time is its stages' chain,
// ~1-2 us each, and a split adds the parts' fixup; bench/NOTES.md session 14). The parts' sums meet in a workspace of
// tiles x split x BM x BN floats and a count a tile.
LK_SHAPE int lk_gemm_h_split(long tiles, int kstages, int slots) {
  int s = 1;
  while (s < 4 && tiles * 2 * s <= slots && kstages >= 12 * s) s *= 2;
  return s;
}

// A grouped GEMM's split (lk_gemm_h_parts, lk_gemm_w_parts: a chunk's q, k and v in one grid): only its tiles past
// the GPU's whole waves of `slots` blocks (the 8B's q/k/v: 192 tiles of 128 x 128 on 132 SMs, one an SM: a second
// wave of 60) split along k, up to 4 ways while they still fit one wave and each part keeps 6 stages or more; the
// rest whole (a split tile's parts meet through global memory, and within whole waves a split saves no time; the whole
// grid split 2 ways, with the parts' sums still read one after another, measured 0.91x in session 45).
LK_SHAPE int lk_gemm_tail_split(long tiles, int kstages, int slots) {
  const long tail = tiles % slots;
  int s = 1;
  while (tail > 0 && s < 4 && tail * (s + 1) <= slots && kstages >= 6 * (s + 1)) ++s;
  return s;
}

// A block's part of k in a GEMM split along k: part z of zs, its tile's slot `slot` in the parts' workspace and
// count (kernels/gemm_half.cuh's lk_gemm_parts).
struct lk_ksplit {
  int z, zs, slot;
};

// A grouped GEMM's work unit `u` (blockIdx.x of a grid of full + (tiles - full) x split units; lk_gemm_tail_split):
// below `full` a whole tile (tile u), past it part (u - full) % split along k of tile full + (u - full) / split, whose
// slot is (u - full) / split. Returns the tile (the output tiles along x, then the activation tiles), `ks` its part.
LK_SHAPE int lk_gemm_unit(int u, int full, int split, lk_ksplit& ks) {
  if (u < full) {
    ks = {0, 1, 0};
    return u;
  }
  const int t = (u - full) / split;
  ks = {(u - full) % split, split, t};
  return full + t;
}

// lk_gemm_w (gemm_wgmma): a block is `wgs` warpgroups, 64 wgs weight rows by bn activation rows, ks (64 or 128) of k a
// stage; two weight tiles of 64 wgs rows of 2 ks + 16 bytes (the values and 16 more, for ldmatrix's banks), then
// LK_GH_STAGES stages of bn rows of ks f16 in wgmma's 128-byte swizzle, and 1,024 bytes to put them on its atoms.
// The blocks an SM its registers allow (a thread's sums are bn / 2) and its shared memory.
LK_SHAPE int lk_gemm_w_smem(int bn, int wgs, int ks) {
  return 2 * 64 * wgs * (2 * ks + 16) + LK_GH_STAGES * bn * ks * 2 + 1024;
}
LK_SHAPE int lk_gemm_w_blocks(int bn, int wgs, int ks) {
  return bn <= 64 && ks <= 64 ? 4 / wgs : bn <= 128 && wgs == 1 ? 2 : 1;
}
LK_SHAPE int lk_gemm_w_outputs(bool glu, int wgs) {
  return (glu ? 32 : 64) * wgs;
}

// The block formats a lane reads in place (formats.cuh's lk_blk), by ggml's type numbers; Q8_0 (lk_q8) beside them.
#define LK_Q8_0 8
#define LK_Q2_K 10
#define LK_Q3_K 11
#define LK_Q4_0 2
#define LK_Q4_1 3
#define LK_Q5_0 6
#define LK_Q5_1 7
#define LK_Q4_K 12
#define LK_Q5_K 13
#define LK_Q6_K 14
#define LK_MXFP4 39
#define LK_IQ4_NL 20
#define LK_IQ4_XS 23
LK_SHAPE bool lk_is_block(int t) {
  return t == LK_Q4_0 || t == LK_Q4_1 || t == LK_Q5_0 || t == LK_Q5_1 || t == LK_Q4_K || t == LK_Q5_K || t == LK_Q6_K ||
         t == LK_MXFP4 || t == LK_IQ4_NL || t == LK_IQ4_XS || t == LK_Q2_K || t == LK_Q3_K;
}
// Whether ggml type `t` is a quantized format (Q8_0 or a block format): what the int8 numerics' products read.
LK_SHAPE bool lk_is_quantized(int t) {
  return t == LK_Q8_0 || lk_is_block(t);
}
// The 16-byte units a lane of a decode GEMV has in flight (a round: the units loaded before the first is used).
#ifndef LK_GEMV_AHEAD
#define LK_GEMV_AHEAD 4
#endif
// LK_GEMV_STAGGER, a measurement switch (0 in every lane; bench/ab_decode.sh's NVFLAGS_* set it): the odd warps of a
// decode GEMV's block (lk_gemv_sums_i8, lk_gemv_sums_i8b) take that many units a lane fewer in their first round, so
// that their later rounds' loads fall between the even warps', where that costs them no extra round (kernels/gemv.cuh
// lk_gemv_stagger; a lane's units and their order unchanged: the same sums).
#ifndef LK_GEMV_STAGGER
#define LK_GEMV_STAGGER 0
#endif
// The units a lane of a decode GEMV takes of each row of `cols` values of ggml type `t` (a 16-byte unit: 32 values of a
// block format, 16 of Q8_0), where that is at most half a round of its int8 loads (LK_GEMV_AHEAD / 2), else 0:
// gemv_short's matrices, whose warps take LK_GEMV_AHEAD / that many times their rows, every unit of each row in
// flight at once (one unit a row: up to 1,024 values of a block format, 512 of Q8_0; two: 2,048 and 1,024).
LK_SHAPE int lk_gemv_short_units(int t, unsigned long long cols) {
  if (!lk_is_quantized(t)) return 0;
  const unsigned long long per = (cols / (lk_is_block(t) ? 32 : 16) + 31) / 32;
  return per >= 1 && per <= LK_GEMV_AHEAD / 2 ? (int)per : 0;
}
// glu_groups: the units a lane takes of each row of the decode step's fused gate/up GEMV over a block format or Q8_0
// matrix of `rows` rows of `cols` (gemv_short's trade: A that many, LK_GEMV_AHEAD / A rows a warp) where its blocks of
// 32 / that many warps can each end one 32-group of outputs with its int8 copy (kernels/gemv.cuh's
// lk_gemv_glu_group), else 0.
LK_SHAPE int lk_glu_group_units(int t, unsigned long long cols, unsigned long long rows) {
  return rows % 32 == 0 ? lk_gemv_short_units(t, cols) : 0;
}
// Elements a block of the checkpoint holds (32, or 256 for the K-quants and IQ4_XS) and its bytes.
LK_SHAPE int lk_block_elems(int t) {
  return t == LK_Q4_K || t == LK_Q5_K || t == LK_Q6_K || t == LK_IQ4_XS || t == LK_Q2_K || t == LK_Q3_K ? 256 : 32;
}
LK_SHAPE int lk_block_bytes(int t) {
  return t == LK_Q4_0 || t == LK_IQ4_NL ? 18 : t == LK_Q4_1 ? 20 : t == LK_Q5_0 ? 22 : t == LK_Q5_1 ? 24
       : t == LK_Q4_K ? 144 : t == LK_Q5_K ? 176 : t == LK_Q6_K ? 210 : t == LK_MXFP4 ? 17 : t == LK_IQ4_XS ? 136
       : t == LK_Q2_K ? 84 : t == LK_Q3_K ? 110 : 0;
}
// The planes a block-format matrix of `n` elements is uploaded as (lk_repack): plane 0 (q) 16 bytes a 32-group of
// 4-bit codes (Q2_K's 2-bit and Q3_K's 3-bit ones too, a nibble each); 1 (h) the high bits (Q5: 4 bytes a group,
// Q6_K: 8); 2 (s) the scales, a group's (Q4_0/Q5_0/IQ4_NL: 2 bytes, Q4_1/Q5_1: 4, MXFP4: 1) or a 256-block's (16
// bytes; IQ4_XS 8: d, the scales' high then low bits; Q3_K its 12 and 4 of padding); 3 (d) the f16 d of a 256-block
// (Q6_K, Q3_K: 2 bytes; Q2_K: d and dmin, 4). The same bits as the checkpoint's blocks, laid out for 16-byte loads.
LK_SHAPE unsigned long long lk_plane_bytes(int t, int plane, unsigned long long n) {
  const unsigned long long g = n / 32, sb = n / 256;
  if (plane == 0) return g * 16;
  if (plane == 1) return t == LK_Q5_0 || t == LK_Q5_1 || t == LK_Q5_K ? g * 4 : t == LK_Q6_K ? g * 8 : 0;
  if (plane == 2)
    return t == LK_Q4_0 || t == LK_Q5_0 || t == LK_IQ4_NL ? g * 2 : t == LK_Q4_1 || t == LK_Q5_1 ? g * 4
         : t == LK_MXFP4 ? g : t == LK_IQ4_XS ? sb * 8 : sb * 16;
  return t == LK_Q6_K || t == LK_Q3_K ? sb * 2 : t == LK_Q2_K ? sb * 4 : 0;
}

#endif
