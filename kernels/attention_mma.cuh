// Attention on the tensor cores (attn_mma): causal, flash-style, over caches of 16-bit elements (kv_cache f16 or
// bf16), for a chunk's rows and (STEP) the decode step's.
//
// A block takes one key/value head, some query rows of its group and one split of the positions. A query row is a
// (chunk row, head) pair with the head the fastest: row i is chunk row i / G and query head kvh G + i % G, so the
// group's heads share each tile of the cache. Tiles of LK_AM_KEYS positions' keys and values arrive by cp.async in
// stages (lk_attention_mma_stages: two for a chunk, three for a step). A chunk's block takes 16 query rows a warp, each
// warp through the whole tile; a step's block (STEP: a row's G heads, at most 16 query rows) takes 16 query rows in
// all, each of its LK_AM_STEP_WARPS warps through an eighth of each tile (8 positions; 4 warps of 16 where a head is
// not whole 32-column loads; heads past 128 wide: 2 x 4 warps of 16, each half of the warps half of the value columns:
// lk_attention_mma_warps), and merges its ways' partials at the end. A warp takes its 16 query rows through its
// positions of a tile:
// - scores by mma (m16n8k16, f32 sums): the queries, rounded to the cache's type, as A; the keys as B by ldmatrix;
// - an online softmax over them in f32, in base 2 (the scale carries log2 e; LK_ATTN_SOFTCAP's cap too);
// - the weights rounded to the cache's type (their sum is of the rounded weights), times the values by mma (the values
//   as B by ldmatrix.trans; m16n8k8 where a warp has 8 positions).
// Row i attends to positions [0, *pos + i / G], or on a sliding layer (window > 0) to the last `window` of them
// (lk_window_first). A split is a splits-th of the positions from the chunk's first row's first to its longest row's
// last; a block starts at its own first row's first position (the tiles of positions none of its rows sees are not
// read). Its partials (max, sum, weighted values; the max in base e) are lk_attention's, which lk_attention_fold
// merges; with one split each row's sink (`sinks`, null for none) joins its sum as lk_attention_out adds it. The
// shape and shared memory are kernels/shapes.cuh's (lk_attention_mma_smem).

#if LK_WITH_ATTN_MMA && (LK_KV == 1 || LK_KV == 2)

// d += a b on the tensor cores: a a 16x16 tile of the cache's type (row-major fragments), b 16x8 (column-major), d f32.
LK_DEVICE void lk_mma_kv(float (&d)[4], const int (&a)[4], int b0, int b1) {
#if LK_KV == 1
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}
// d += a b, the k8 shape (m16n8k8): a 16x8 tile of the cache's type (two registers: rows g and g + 8), b 8x8.
LK_DEVICE void lk_mma_kv8(float (&d)[4], int a0, int a1, int b0) {
#if LK_KV == 1
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(b0));
#else
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(b0));
#endif
}

// Two values rounded to the cache's type and packed into one register (the first in the low half); `ra` and `rb`
// receive the rounded values.
LK_DEVICE int lk_pack_kv(float a, float b, float& ra, float& rb) {
#if LK_KV == 1
  const __half2 h = __floats2half2_rn(a, b);
#else
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
#endif
  ra = __low2float(h);
  rb = __high2float(h);
  return *reinterpret_cast<const int*>(&h);
}

// The output of a query row (`rh`: its row and head, r hq + head) from its max (base 2), sum and weighted values: the
// values over the sum (with the head's sink), or with splits the split's partial (max in base e, as lk_attention_fold
// reads it).
template <int VD>
LK_DEVICE lk_act lk_am_put(lk_act* __restrict__ out, lk_acc* __restrict__ part, const float* __restrict__ sinks,
                           size_t rh, int head, int s, int splits, float m, float l, int d, float v) {
  if (splits == 1) {
    const lk_act o = (lk_act)lk_attention_out(m * 0.69314718f, l, v, sinks, head);
    out[rh * VD + d] = o;
    return o;  // (the value written: the decode step quantizes it from shared memory)
  }
  lk_acc* pp = part + (rh * splits + s) * (VD + 2);
  if (d == 0) {
    pp[0] = m == -INFINITY ? -INFINITY : m * 0.69314718f;
    pp[1] = l;
  }
  pp[2 + d] = v;
  return 0;
}

// A value as the cache holds it (lk_kv_put_row's conversion).
LK_DEVICE lk_kv lk_kv_of(float x) {
#if LK_KV == 1
  return __float2half(x);
#else
  return __float2bfloat16(x);
#endif
}

// A whole tile of LK_AM_KEYS cached rows of W 16-bit values from `src` (contiguous rows) into `dst` (rows of W + 8), in
// flight by cp.async by the block's T threads, a 16-byte piece a thread a round: piece c of the tile is at 8 c in the
// cache and, past its row's 8 padding elements a row before it, at 8 (c + c / (W / 8)) in the stage.
template <int W, int T>
LK_DEVICE void lk_am_copy_tile(lk_kv* dst, const lk_kv* src) {
  constexpr int P = W / 8;
  static_assert(LK_AM_KEYS * P % T == 0, "a tile's pieces are whole rounds of the block's threads");
#pragma unroll
  for (int i = 0; i < LK_AM_KEYS * P / T; ++i) {
    const int c = (int)threadIdx.x + i * T;
    lk_cp16(dst + 8 * (c + c / P), src + 8 * c, true);
  }
}

// ROPE (the decode step, one row, under fuse_rope_kv): rope, the per-head norm and the cache append folded in (bit 1;
// bit 2 the NeoX pairs, bit 4 the norm): the block ropes its query heads from `q` (as the projection wrote them) into
// its queries, and where its split holds the row's position also the key head (into the cache and its stage) and
// copies the value head; `rope` is lk_rope's parameters (unused without ROPE).
template <int HD, int VD, bool STEP, int ROPE = 0>
__global__ void __launch_bounds__(lk_attention_mma_warps(STEP, HD, VD) * 32, STEP && !lk_am_wide(HD, VD) ? 2 : 1)
    lk_attention_mma(const lk_act* __restrict__ q, lk_kv* kc, lk_kv* vc, const int* __restrict__ pos,
                     lk_act* __restrict__ out, lk_acc* __restrict__ part, const float* __restrict__ sinks, int window,
                     int rows, int hq, int ctx, float scale2, int splits, int group, int* __restrict__ xq,
                     int* __restrict__ count, lk_rope_args rope) {
  if (LK_ABLATE & 1) {  // (a measurement switch: kernels/prelude.cuh)
    lk_pdl_entry();
    return;
  }
  LK_TL_MARKS
  static_assert(HD % 16 == 0 && VD % 16 == 0, "head widths are multiples of 16 (the mma's k, two n tiles a load)");
  constexpr int QS = HD + 8, KS = HD + 8, VS = VD + 8;  // row strides in elements (16 bytes past the row)
  constexpr int M = lk_attention_mma_rows(STEP);        // the block's query rows
  constexpr int WARPS = lk_attention_mma_warps(STEP, HD, VD);
  // (a step's warps: WAYS of the positions times VSPLIT parts of the value columns, VW columns each)
  constexpr int VSPLIT = lk_attention_mma_vsplit(STEP, HD, VD), WAYS = WARPS / VSPLIT, VW = VD / VSPLIT;
  constexpr int NK = STEP ? LK_AM_KEYS / WAYS : LK_AM_KEYS, NT = NK / 8;  // a warp's positions (tiles of 8)
  static_assert(NT == 1 || NT % 2 == 0, "a warp's positions: 8 (the k8 products) or 16 and more");
  constexpr int STAGES = lk_attention_mma_stages(STEP);
  static_assert(!ROPE || STEP, "rope is folded into the decode step's attention only");
  extern __shared__ unsigned char lk_smem[];
  lk_kv* qs = reinterpret_cast<lk_kv*>(lk_smem);  // [M][QS]
  lk_kv* ks = qs + M * QS;                        // [STAGES][LK_AM_KEYS][KS]
  lk_kv* vs = ks + STAGES * LK_AM_KEYS * KS;      // [STAGES][LK_AM_KEYS][VS]
  const int kvh = blockIdx.x, i0 = blockIdx.y * M, s = blockIdx.z;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  // (the warp's way and first value column: the warp and 0 where the columns are not split)
  const int way = VSPLIT == 1 ? warp : warp % WAYS, v0 = VSPLIT == 1 ? 0 : warp / WAYS * VW;
  const int rw = STEP ? 0 : warp * 16, kw = STEP ? way * NK : 0;  // the warp's first row and position
  const int p0 = *pos, total = rows * group;
  const int last = min(total, i0 + M) - 1;  // the block's last query row
  const int first = lk_window_first(p0 + 1, window), longest = p0 + rows;
  // (its own fold: whole tiles a split, and the splits past the row's positions have nothing to do)
  const bool own = STEP && count && splits > 1;
  const int all = longest - first, chunk = own ? lk_am_fold_chunk(all, splits) : (all + splits - 1) / splits;
  const int parts = own ? (all + chunk - 1) / chunk : splits, split0 = first + s * chunk;
  if (s >= parts) return;
  const int t0 = max(split0, lk_window_first(p0 + i0 / group + 1, window));
  const int t1 = min(min(longest, split0 + chunk), p0 + last / group + 1);
  const int tiles = t1 > t0 ? (t1 - t0 + LK_AM_KEYS - 1) / LK_AM_KEYS : 0;

  // Tile `tile` of the split's keys and values into stage `buf`, its positions before `upto`; positions past t1 as
  // zeros (never weighed). A whole tile of positions before both (every tile but a split's last, at depth) takes the
  // straight copies (lk_am_copy_tile); the general loop's conditions and 64-bit addressing were ~23 instructions a
  // 16-byte copy, more than the tile's arithmetic (session 27's ncu at depth 32k).
  auto stage = [&](int tile, int buf, int upto) {
    const int tb = t0 + tile * LK_AM_KEYS, end = min(t1, upto);
    lk_kv* kd = ks + buf * LK_AM_KEYS * KS;
    lk_kv* vd = vs + buf * LK_AM_KEYS * VS;
    if (tb + LK_AM_KEYS <= end) {
      lk_am_copy_tile<HD, WARPS * 32>(kd, kc + ((size_t)kvh * ctx + tb) * HD);
      lk_am_copy_tile<VD, WARPS * 32>(vd, vc + ((size_t)kvh * ctx + tb) * VD);
      lk_cp_commit();
      return;
    }
    for (int c = threadIdx.x; c < LK_AM_KEYS * (HD / 8); c += blockDim.x) {
      const int j = c / (HD / 8), piece = c % (HD / 8), p = tb + j;
      if (p < end || p >= t1)
        lk_cp16(kd + j * KS + piece * 8, kc + ((size_t)kvh * ctx + (p < end ? p : 0)) * HD + piece * 8, p < end);
    }
    for (int c = threadIdx.x; c < LK_AM_KEYS * (VD / 8); c += blockDim.x) {
      const int j = c / (VD / 8), piece = c % (VD / 8), p = tb + j;
      if (p < end || p >= t1)
        lk_cp16(vd + j * VS + piece * 8, vc + ((size_t)kvh * ctx + (p < end ? p : 0)) * VD + piece * 8, p < end);
    }
    lk_cp_commit();
  };
  // Under ROPE the first tiles are asked before the launch before this one has finished (pdl), so that they arrive
  // while the block ropes: the positions before the row's were cached by earlier steps, which every launch before this
  // one's predecessor waited for, and the row's own position is the block's to append (below).
  if constexpr (ROPE)
    for (int i = 0; i < STAGES - 1; ++i)  // (an empty group where there is no tile: every wait counts groups alike)
      if (i < tiles)
        stage(i, i, p0);
      else
        lk_cp_commit();
  // (and the lane's rope constants at the position, for the query heads and the key head: constants of the position)
  constexpr bool NEOX = ROPE & 2, NORM = ROPE & 4;
  constexpr int PP = (HD / 2 + 31) / 32;
  lk_rope_lane<NORM, PP> rq, rk;
  if constexpr (ROPE != 0) {
    rq = lk_rope_lane_at<NEOX, NORM, PP>(rope, rope.qn, p0);
    rk = lk_rope_lane_at<NEOX, NORM, PP>(rope, rope.kn, p0);
  }
  lk_pdl_entry();
  LK_TL_MARK(1)
  if constexpr (!ROPE)
    for (int i = 0; i < STAGES - 1; ++i)
      if (i < tiles)
        stage(i, i, INT_MAX);
      else
        lk_cp_commit();

  if constexpr (ROPE) {
    // The row's query heads roped into the queries; where this split holds the position, the key head roped and the
    // value head into the caches and, if its tile is staged already, its stage. (The query rows past the row's heads
    // are left as they are: those rows see no position (span 0), so their scores are masked whatever they hold, and
    // their outputs are not written. Zeroing them was ~200 instructions a warp after the wait: session 26's ncu.)
    const bool mine = p0 >= t0 && p0 < t1;
    const int tp = (p0 - t0) / LK_AM_KEYS, jp = (p0 - t0) % LK_AM_KEYS;
    const bool staged = mine && tp < STAGES - 1;
    // A warp's items (query heads, then the key head and the value head) are every WARPS-th: all their loads
    // first, then their rope (a warp with two items waited for two L2 round trips one after the other: the 8B's rope
    // took 2.3 us of its attention's 7.5 in session 29's marks, the 0.6B's, an item a warp, 0.7). The value head reads
    // as pairs too where it is as wide as a key head.
    constexpr int IT = (M + 2 + WARPS - 1) / WARPS;
    const int items = (total + 2 - warp + WARPS - 1) / WARPS;  // (the warp's: uniform)
    lk_rope_in<PP> in[IT];
#pragma unroll
    for (int j = 0; j < IT; ++j) {
      const int item = warp + j * WARPS;
      if (j >= items) break;
      if (item < total)
        in[j] = lk_rope_load<NEOX, PP>(rope, q + ((size_t)kvh * group + item) * HD);
      else if (mine && item == total)
        in[j] = lk_rope_load<NEOX, PP>(rope, rope.k + (size_t)kvh * HD);
      else if (VD == HD && mine && item == total + 1)
        in[j] = lk_rope_load<NEOX, PP>(rope, rope.v + (size_t)kvh * VD);
    }
#pragma unroll
    for (int j = 0; j < IT; ++j) {
      const int item = warp + j * WARPS;
      if (j >= items) break;
      if (item < total) {
        lk_rope_apply<NEOX, NORM, PP>(rope, in[j], rq, [&](int ia, int ib, lk_act ya, lk_act yb) {
          qs[item * QS + ia] = lk_kv_of((float)ya);
          qs[item * QS + ib] = lk_kv_of((float)yb);
        });
      } else if (mine && item == total) {
        lk_kv* row = kc + ((size_t)kvh * ctx + p0) * HD;
        lk_kv* srow = ks + (tp * LK_AM_KEYS + jp) * KS;
        lk_rope_apply<NEOX, NORM, PP>(rope, in[j], rk, [&](int ia, int ib, lk_act ya, lk_act yb) {
          row[ia] = lk_kv_of((float)ya);
          row[ib] = lk_kv_of((float)yb);
          if (staged) {
            srow[ia] = row[ia];
            srow[ib] = row[ib];
          }
        });
      } else if (mine && item == total + 1) {
        lk_kv* row = vc + ((size_t)kvh * ctx + p0) * VD;
        lk_kv* srow = vs + (tp * LK_AM_KEYS + jp) * VS;
        if constexpr (VD == HD) {
#pragma unroll
          for (int i = 0; i < PP; ++i) {
            const int pj = lane + 32 * i;
            if (pj >= HD / 2) break;
            const int ia = NEOX ? pj : 2 * pj, ib = NEOX ? pj + HD / 2 : 2 * pj + 1;
            row[ia] = lk_kv_of((float)in[j].xa[i]);
            row[ib] = lk_kv_of((float)in[j].xb[i]);
            if (staged) {
              srow[ia] = row[ia];
              srow[ib] = row[ib];
            }
          }
        } else {
          for (int d = lane; d < VD; d += 32) {
            row[d] = lk_kv_of((float)__ldcg(rope.v + (size_t)kvh * VD + d));
            if (staged) srow[d] = row[d];
          }
        }
      }
    }
    __threadfence_block();  // (a later tile's copies read the appended row)
  } else {
    // The block's queries, rounded to the cache's type (rows past the chunk's as zeros), then the warp's A fragments.
    for (int e = threadIdx.x; e < M * (HD / 2); e += blockDim.x) {
      const int i = e / (HD / 2), d = 2 * (e % (HD / 2)), row = i0 + i;
      float a = 0.f, b = 0.f;
      if (row < total) {
        const lk_act* src = q + ((size_t)(row / group) * hq + kvh * group + row % group) * HD + d;
        a = (float)src[0];
        b = (float)src[1];
      }
      float ra, rb;
      *reinterpret_cast<int*>(qs + i * QS + d) = lk_pack_kv(a, b, ra, rb);
    }
  }
  __syncthreads();
  // The warp's queries as the scores' A fragments: held in registers, or for heads past 128 wide (the gemmas' 256)
  // read from shared memory at each use (HD / 16 x 4 registers beside the values' VD / 8 x 4 would pass a thread's
  // 255: spills).
  constexpr bool QREGS = HD <= 128;
  int qf[QREGS ? HD / 16 : 1][4];
  if constexpr (QREGS)
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) lk_ldmatrix4(qf[kk], qs + (rw + (lane & 15)) * QS + kk * 16 + 8 * (lane >> 4));
  auto qfrag = [&](int kk, int (&a)[4]) {
    if constexpr (QREGS) {
#pragma unroll
      for (int e = 0; e < 4; ++e) a[e] = qf[kk][e];
    } else {
      lk_ldmatrix4(a, qs + (rw + (lane & 15)) * QS + kk * 16 + 8 * (lane >> 4));
    }
  };
  LK_TL_MARK(2)

  // The thread's two rows (g and g + 8 of the warp's 16): where their positions start (from) and how many of them
  // this split has from there (span: 0 for a row past the chunk's).
  int from[2], span[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = i0 + rw + g + 8 * h, len = p0 + row / group + 1;
    from[h] = lk_window_first(len, window);
    span[h] = row < total ? max(0, min(t1, len) - from[h]) : 0;
  }
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[VW / 8][4];
#pragma unroll
  for (int n = 0; n < VW / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;

  for (int tile = 0; tile < tiles; ++tile) {
    const int next = tile + STAGES - 1;  // into the stage the tile before this one was read from
    if (next < tiles)
      stage(next, next % STAGES, INT_MAX);
    else
      lk_cp_commit();
    lk_cp_wait<STAGES - 1>();
    __syncthreads();
    if (tile == 0) {
      LK_TL_MARK(8)
    }
    const lk_kv* kt = ks + ((tile % STAGES) * LK_AM_KEYS + kw) * KS;
    const lk_kv* vt = vs + ((tile % STAGES) * LK_AM_KEYS + kw) * VS;
    // Scores: 16 rows by the warp's NK positions, NT tiles of 8 (one ldmatrix 16 positions by 16 dims, or with 8
    // positions 8 by 32: two of the queries' k steps).
    float sc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j) sc[j][0] = sc[j][1] = sc[j][2] = sc[j][3] = 0.f;
    if constexpr (NT == 1) {
      // (one chain of dependent products: two chains, the odd k steps summed apart, measured no faster in session 52:
      // decode 0.998x / 1.000x)
#pragma unroll
      for (int kk = 0; kk < HD / 16; kk += 2) {
        int a0[4], a1[4], b[4];
        qfrag(kk, a0);
        qfrag(kk + 1, a1);
        lk_ldmatrix4(b, kt + (lane & 7) * KS + kk * 16 + 8 * (lane >> 3));
        lk_mma_kv(sc[0], a0, b[0], b[1]);
        lk_mma_kv(sc[0], a1, b[2], b[3]);
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < HD / 16; ++kk) {
        int a[4];
        qfrag(kk, a);
#pragma unroll
        for (int np = 0; np < NT / 2; ++np) {
          int b[4];
          lk_ldmatrix4(b, kt + (np * 16 + (lane & 7) + 8 * (lane >> 4)) * KS + kk * 16 + 8 * ((lane >> 3) & 1));
          lk_mma_kv(sc[2 * np], a, b[0], b[1]);
          lk_mma_kv(sc[2 * np + 1], a, b[2], b[3]);
        }
      }
    }
    // The causal (and sliding) mask, the scale, each row's max over the tile (a row's 4 threads meet by shuffles).
    const int tb = t0 + tile * LK_AM_KEYS + kw;
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int h = e >> 1, p = tb + 8 * j + 2 * t + (e & 1);
        float s2 = sc[j][e] * scale2;
        // (the softcap in base 2: cap log2(e) tanh(s2 / (cap log2(e))) is log2(e) times the cap of the logit)
        if constexpr (LK_ATTN_SOFTCAP != 0) s2 = lk_softcap(s2, LK_ATTN_SOFTCAP * 1.44269504088896341f);
        sc[j][e] = (unsigned)(p - from[h]) < (unsigned)span[h] ? s2 : -INFINITY;
        mx[h] = fmaxf(mx[h], sc[j][e]);
      }
    float corr[2];
    bool rescale = false;  // (whether a row's sums change under its factor: below)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      const float mn = fmaxf(m[h], mx[h]);
      corr[h] = mn == -INFINITY ? 1.f : exp2f(m[h] - mn);
      rescale |= m[h] != -INFINITY && corr[h] != 1.f;
      m[h] = mn;
      l[h] *= corr[h];
    }
    // The weights, rounded, as the A fragments of the second product: positions 16 kp .. 16 kp + 15 are score tiles
    // 2 kp (registers 0, 1) and 2 kp + 1 (registers 2, 3), rows g then g + 8 (with 8 positions, the k8 product's two
    // registers: rows g and g + 8 of score tile 0).
    int pf[(NT + 1) / 2][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const bool none = m[h] == -INFINITY;
        float ra, rb;
        pf[j >> 1][(j & 1) * 2 + h] =
            lk_pack_kv(none ? 0.f : exp2f(sc[j][2 * h] - m[h]), none ? 0.f : exp2f(sc[j][2 * h + 1] - m[h]), ra, rb);
        l[h] += ra + rb;
      }
    // The sums rescaled where a row of the warp's has a factor that changes them: not where every factor is 1 (no
    // new maximum) or a row has weighed nothing yet (its sums zero, its factor 0 or 1): the same numbers, without
    // VW / 2 multiplications -- 64 of a step tile's ~223 instructions a warp (session 48's SASS: the loop issue-bound).
    if (__any_sync(0xffffffffu, rescale))
#pragma unroll
      for (int n = 0; n < VW / 8; ++n) {
        o[n][0] *= corr[0];
        o[n][1] *= corr[0];
        o[n][2] *= corr[1];
        o[n][3] *= corr[1];
      }
    if constexpr (NT == 1) {  // (8 positions by 32 value columns an ldmatrix: four k8 products)
#pragma unroll
      for (int np = 0; np < VW / 32; ++np) {
        int b[4];
        lk_ldmatrix4_trans(b, vt + (lane & 7) * VS + v0 + np * 32 + 8 * (lane >> 3));
#pragma unroll
        for (int i = 0; i < 4; ++i) lk_mma_kv8(o[4 * np + i], pf[0][0], pf[0][1], b[i]);
      }
    } else {
#pragma unroll
      for (int kp = 0; kp < NT / 2; ++kp)
#pragma unroll
        for (int np = 0; np < VW / 16; ++np) {
          int b[4];
          lk_ldmatrix4_trans(b,
                             vt + (kp * 16 + (lane & 7) + 8 * ((lane >> 3) & 1)) * VS + v0 + np * 16 + 8 * (lane >> 4));
          lk_mma_kv(o[2 * np], pf[kp], b[0], b[1]);
          lk_mma_kv(o[2 * np + 1], pf[kp], b[2], b[3]);
        }
    }
    __syncthreads();  // (the stage is refilled STAGES tiles on; a step's merge reuses the memory)
  }

  LK_TL_MARK(3)
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // each row's sum over its 4 threads
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
  static_assert(WAYS >= 2, "a step's merge keeps each row's sum and max in ways 0 and 1's slots");
  const lk_act* whole = out;  // (the output's values for its quantized copy: a step's own fold's in shared memory)
  if constexpr (!STEP) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = i0 + rw + g + 8 * h;
      if (row >= total) continue;
      const int head = kvh * group + row % group;
      const size_t rh = (size_t)(row / group) * hq + head;
#pragma unroll
      for (int n = 0; n < VW / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          lk_am_put<VD>(out, part, sinks, rh, head, s, splits, m[h], l[h], 8 * n + 2 * t + e, o[n][2 * h + e]);
    }
  } else {
    // The ways' partials of the block's rows (last - i0 + 1 of its 16), merged in shared memory (past every warp's
    // reads of it); a way's max and sum are its first value part's to write (every part has the same).
    const int here = last - i0 + 1;
    __syncthreads();
    LK_TL_MARK(6)
    float* sm = reinterpret_cast<float*>(lk_smem);                // [ways][16]
    float* sl = sm + WAYS * 16;                                   // [ways][16]
    float* so = sl + WAYS * 16;                                   // [ways][16][VD]
    lk_act* sq = reinterpret_cast<lk_act*>(so + WAYS * 16 * VD);  // [here][VD]: the output, when whole
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = g + 8 * h;
      if (r >= here) continue;
      if (t == 0 && v0 == 0) {
        sm[way * 16 + r] = m[h];
        sl[way * 16 + r] = l[h];
      }
#pragma unroll
      for (int n = 0; n < VW / 8; ++n) {
        so[(way * 16 + r) * VD + v0 + 8 * n + 2 * t] = o[n][2 * h];
        so[(way * 16 + r) * VD + v0 + 8 * n + 2 * t + 1] = o[n][2 * h + 1];
      }
    }
    __syncthreads();
    // Each row's max, its ways' factors (in place of their maxes: 0 for a way that saw none of its positions) and
    // its sum, once a row; then a value a thread and turn (session 29's marks: recomputing them for every value was
    // 1.1 us of the 0.6B's 5.8 us launch). The same sums in the same order as a value's own loop: the same numbers.
    if (threadIdx.x < here) {
      const int r = threadIdx.x;
      float mx = -INFINITY, sum = 0.f;
#pragma unroll
      for (int w = 0; w < WAYS; ++w) mx = fmaxf(mx, sm[w * 16 + r]);
#pragma unroll
      for (int w = 0; w < WAYS; ++w) {
        const float mw = sm[w * 16 + r], f = mw == -INFINITY ? 0.f : exp2f(mw - mx);
        sum += sl[w * 16 + r] * f;
        sm[w * 16 + r] = f;
      }
      sl[r] = sum;  // (warp 0's and 1's slots of the row, read above)
      sl[16 + r] = mx;
    }
    __syncthreads();
    LK_TL_MARK(7)
    for (int i = threadIdx.x; i < here * VD; i += blockDim.x) {
      const int r = i / VD, d = i % VD, row = i0 + r;
      float val = 0.f;
#pragma unroll
      for (int w = 0; w < WAYS; ++w) val += so[(w * 16 + r) * VD + d] * sm[w * 16 + r];
      const int head = kvh * group + row % group;
      sq[i] = lk_am_put<VD>(out, part, sinks, (size_t)(row / group) * hq + head, head, s, parts > 1 ? splits : 1,
                            sl[16 + r], sl[r], d, val);
    }
    // One split (the output whole here) of the row: its quantized copy from the values in shared memory, not read
    // back from global memory (an L2 round trip after the wait; session 28).
    if (parts == 1 && rows == 1 && xq) {
      __syncthreads();
      LK_TL_MARK(4)
      const int c0 = (kvh * group + i0) * VD;
      lk_quantize_cols(sq - c0, xq, hq * VD, c0, here * VD);
      LK_TL_MARK(5)
      return;
    }
    if (own && parts > 1) {  // (its own fold: the last split's block to finish merges the splits)
      if (!lk_last_arrival(count + kvh * gridDim.y + blockIdx.y, parts)) return;
      // (the merged values also into shared memory past the fold's maxima, weights and sums, 2 here (parts + 1), for
      // their quantized copy: not read back from global memory, as with one split)
      lk_acc* fs = reinterpret_cast<lk_acc*>(lk_smem);
      lk_act* fq = reinterpret_cast<lk_act*>(fs + 2 * here * (parts + 1));
      lk_fold_splits(part, out, sinks, kvh * group + i0, kvh * group + i0, here, VD, splits, parts, fs, 1, fq);
      whole = fq - (kvh * group + i0) * VD;
    }
    if (own) splits = 1;  // (the output is whole: the quantized copy below is this block's to write)
  }
  if (rows == 1)  // (the block's rows are query heads kvh group + i0 ..: consecutive values of the row)
    lk_attention_quantize(whole, xq, hq * VD, (kvh * group + i0) * VD, (last - i0 + 1) * VD, splits);
}

#endif  // LK_WITH_ATTN_MMA && (LK_KV == 1 || LK_KV == 2)
