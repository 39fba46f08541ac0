// gemm_half: a chunk's GEMMs on the tensor cores in f16, for any weight format. The activations are rounded to f16
// once (lk_half_rows, into a copy every GEMM of them reads); each weight's value is the dequant numerics' (the format's
// expand, in f32) rounded to f16 as it is unpacked into a tile in shared memory; mma.m16n8k16 sums the products in
// f32. No scale touches the sums after the mma (the int8 GEMMs' per-32-block epilogue bounds them), and a weight
// tile's unpacking is shared by the block's activation rows. Measured alone on the H200 (bench/gemm_bench.cu,
// bench/NOTES.md session 13): the fused gate/up GEMM of the 8B at 225-232 TFLOPS against the int8 tiled GEMM's 128-157;
// a block's time is then its instructions' (the unpacking, 7% of them mma). In the lanes (session 14, 64-row blocks and
// small grids split along k): llama-3.1-8b Q4_K_M's prefill(512) 11,192 tok/s against the int8 GEMMs' 6,128.
//
// lk_gemm_h<W, GLU, BN, BM> (and a mixture's grouped experts, lk_moe_gemm_h): a block of LK_GH_WARPS warps takes BM
// weight rows (128 or 64; GLU: half of them gate rows, the same output rows' up rows the other half) by BN activation
// rows, lk_gemm_h_k(BM) of k a stage (a 32-group a thread):
// - the weights: each thread loads one 32-group of a stage (F::load, its format's units) into registers P stages
//   ahead (lk_gemm_h_prefetch), and expands it into 32 f16 in the other tile while the warps multiply this stage's
//   (two tiles);
// - the activations: LK_GH_STAGES stages of f16 rows by cp.async;
// - the warps: 2 across the weight rows (BM / 2 rows each, under GLU BM / 4 of each matrix) by 4 across the activation
//   rows (BN / 4 each); the fragments by ldmatrix (the weights as A, the activations as B).
// Each output is the f32 sum over k in 16-element steps, in order (a split GEMM's parts then added in their order);
// with the bias, and under GLU the gated activation (lk_glu). The shape and the shared memory are kernels/shapes.cuh's
// (lk_gemm_h_smem); the lowering's choice of them compiler/src/lane/schedule.cpp's half_gemm_shape.

// The activations rounded to f16: n values (a multiple of 8), 8 a thread.
__global__ void __launch_bounds__(256) lk_half_rows(const lk_act* __restrict__ x, __half* __restrict__ y, int n) {
  lk_pdl_entry();
  const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (i >= (size_t)n) return;
  const float4 a = *reinterpret_cast<const float4*>(x + i), b = *reinterpret_cast<const float4*>(x + i + 4);
  const __half2 h[4] = {__floats2half2_rn(a.x, a.y), __floats2half2_rn(a.z, a.w), __floats2half2_rn(b.x, b.y),
                        __floats2half2_rn(b.z, b.w)};
  *reinterpret_cast<int4*>(y + i) = *reinterpret_cast<const int4*>(h);
}

#if LK_WITH_GEMM_HALF

#if LK_WITH_BLOCKS
// An MXFP4 32-group straight to f16, two elements a word: a 3-bit magnitude code c (E2M1's exponent and mantissa
// bits) placed at bit 9 of an f16 reads as E2M1's value times 2^-14 (c = 1, 0.5, as a subnormal), so the group's
// values are those patterns (the sign at bit 15; code 8, -0, as +0) times one f16 power of two, 2^(e - 113) for the
// group's exponent byte e. Both factors exact, the product is rounded once -- the same f16 as the dequant numerics'
// f32 value rounded (bench/moe_gemm_bench.cu checks every code and exponent). Returns false, with nothing written,
// where that power of two is not an f16 (e outside 89 .. 128): the caller takes the f32 path.
LK_DEVICE bool lk_mxfp4_half(const int4& q, unsigned e, __half2 (&h)[16]) {
  if (e < 89u || e > 128u) return false;
  const unsigned short bits = (unsigned short)(e >= 99u ? (e - 98u) << 10 : 1u << (e - 89u));
  const __half2 scale = __half2half2(__ushort_as_half(bits));
  // codes (4 bits in each 16-bit half of p) to their f16 patterns
  auto pattern = [](unsigned p) {
    const unsigned m = p & 0x00070007u, nonzero = (m + 0x00070007u) & 0x00080008u;
    const unsigned v = (m << 9) | ((p & nonzero) << 12);
    return *reinterpret_cast<const __half2*>(&v);
  };
  const unsigned w[4] = {(unsigned)q.x, (unsigned)q.y, (unsigned)q.z, (unsigned)q.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {  // bytes 4i .. 4i + 3: elements 4i .. 4i + 3 (low nibbles), 16 + 4i .. (high)
    const unsigned a = __byte_perm(w[i], 0u, 0x4140u), b = __byte_perm(w[i], 0u, 0x4342u);
    h[2 * i] = __hmul2(pattern(a), scale);
    h[2 * i + 1] = __hmul2(pattern(b), scale);
    h[8 + 2 * i] = __hmul2(pattern(a >> 4), scale);
    h[8 + 2 * i + 1] = __hmul2(pattern(b >> 4), scale);
  }
  return true;
}
#endif

#if LK_WITH_BLOCKS
// A Q4_K 32-group straight to f16 pairs (lk_gemm_w's unpacking; session 25's call 1 at 512 rows: q 70.5 -> 63.7 us,
// down 227.7 -> 204.3, gate/up 490.9 -> 470.7; lk_gemm_h's mma.sync GEMMs 1-5% slower with it, so they keep the f32
// path):
// each code pair placed in the mantissas of two f16 1,024s (1,024 + q, exact), 1,024 taken away (exact), then q d1 - m1
// by one f16 fused multiply-add with d1 = d sc and m1 = dmin m (f32, the reference's products) rounded to f16: 2
// half2 operations a pair where the f32 path takes 6 operations a value and a conversion a pair. Its values differ
// from the dequant numerics' rounded to f16 by the roundings of d1 and m1 (~1 unit in f16's last place; gemm_half's
// bound is 2e-3). Returns false, with nothing written, where d1 or m1 is not a normal f16 (below 2^-14, where f16's
// precision thins): the caller takes the f32 path.
template <class Raw>
LK_DEVICE bool lk_q4k_half(const Raw& r, __half2 (&h)[16]) {
  const float d = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x & 0xffff)));
  const float dmin = __half2float(__ushort_as_half((unsigned short)((unsigned)r.s.x >> 16)));
  int sc, mn;
  lk_scale_min_k4(r.sub, (unsigned)r.s.y, (unsigned)r.s.z, (unsigned)r.s.w, sc, mn);
  const float d1 = __fmul_rn(d, lk_small_float(sc)), m1 = __fmul_rn(dmin, lk_small_float(mn));
  const float tiny = 6.103515625e-05f;  // 2^-14
  if ((d1 != 0.f && fabsf(d1) < tiny) || (m1 != 0.f && fabsf(m1) < tiny) || fabsf(d1) > 4096.f || fabsf(m1) > 4096.f)
    return false;
  const __half2 s2 = __float2half2_rn(d1), nm2 = __float2half2_rn(-m1), k1024 = __float2half2_rn(1024.f);
  auto pair = [&](unsigned v) {  // (the codes in bits 0-3 and 16-19)
    const unsigned x = (v & 0x000f000fu) | 0x64006400u;
    return __hfma2(__hsub2(*reinterpret_cast<const __half2*>(&x), k1024), s2, nm2);
  };
  const unsigned w[4] = {(unsigned)r.q.x, (unsigned)r.q.y, (unsigned)r.q.z, (unsigned)r.q.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {  // bytes 4i .. 4i + 3: elements 4i .. 4i + 3 (low nibbles), 16 + 4i .. (high)
    const unsigned a = __byte_perm(w[i], 0u, 0x4140u), b = __byte_perm(w[i], 0u, 0x4342u);
    h[2 * i] = pair(a);
    h[2 * i + 1] = pair(b);
    h[8 + 2 * i] = pair(a >> 4);
    h[8 + 2 * i + 1] = pair(b >> 4);
  }
  return true;
}
#endif

// A thread's 32-group of weights (its format's U units, loaded) expanded to 32 f16 at `dst` (64 bytes), in order; zeros
// where `in` is false (past k). The f16 GEMMs' (lk_gemm_h, lk_gemm_w) one unpacking; DIRECT_Q4K: Q4_K by lk_q4k_half.
template <class W, bool DIRECT_Q4K = false>
LK_DEVICE void lk_gh_expand(const typename lk_fmt<W>::Raw (&r)[32 / lk_fmt<W>::E], bool in, unsigned char* dst) {
  using F = lk_fmt<W>;
  constexpr int U = 32 / F::E;
  __half2 h[16];
  bool direct = false;  // (MXFP4 and Q4_K: the group's f16 values without the f32 ones, lk_mxfp4_half, lk_q4k_half)
#if LK_WITH_BLOCKS
  if constexpr (lk_blk_type<W>::value == LK_MXFP4) direct = lk_mxfp4_half(r[0].q, (unsigned)r[0].s.x & 0xffu, h);
  if constexpr (lk_blk_type<W>::value == LK_Q4_K && DIRECT_Q4K) direct = lk_q4k_half(r[0], h);
  if (direct && !in)
#pragma unroll
    for (int j = 0; j < 16; ++j) h[j] = __half2();
#endif
  if (!direct)
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float v[F::E];
      F::expand(r[u], v);
#pragma unroll
      for (int e = 0; e < F::E; e += 2) h[(u * F::E + e) / 2] = in ? __floats2half2_rn(v[e], v[e + 1]) : __half2();
    }
  int4* d = reinterpret_cast<int4*>(dst);
#pragma unroll
  for (int q = 0; q < 4; ++q) d[q] = reinterpret_cast<const int4*>(h)[q];
}

// (lk_ksplit, a block's part of k in a split GEMM, and lk_gemm_unit are kernels/shapes.cuh's.) A launched grid's
// split: blockIdx.z of gridDim.z, its tile's slot blockIdx.y gridDim.x + blockIdx.x.
LK_DEVICE lk_ksplit lk_ksplit_grid() {
  return {(int)blockIdx.z, (int)gridDim.z, (int)(blockIdx.y * gridDim.x + blockIdx.x)};
}

// A GEMM split along k: each part stores its NA sums a thread (flat; THREADS threads, coalesced across them) in its
// slice of `part`; the block that counts the tile's last part adds the parts in their order (whichever finished last,
// so the sums are the same every run), leaves them in `flat` and resets the tile's count for the next launch. Its
// loads a part's NA at once: a value's parts one after another were NA x zs dependent trips to L2 (64 x 2 for
// lk_gemm_w's tiles: ~100 us added to a split launch, session 45). Returns whether this block goes on to write the
// tile (every block where there is one part).
template <int NA, int THREADS>
LK_DEVICE bool lk_gemm_parts(float* flat, float* __restrict__ part, int* __restrict__ count, lk_ksplit ks) {
  if (ks.zs == 1) return true;
  const int tid = threadIdx.x;
  float* const slice = part + (size_t)ks.slot * ks.zs * NA * THREADS;
#pragma unroll
  for (int a = 0; a < NA; ++a) slice[((size_t)ks.z * NA + a) * THREADS + tid] = flat[a];
  if (!lk_last_arrival(count + ks.slot, ks.zs)) return false;
#pragma unroll
  for (int a = 0; a < NA; ++a) flat[a] = __ldcg(slice + (size_t)a * THREADS + tid);
  for (int z = 1; z < ks.zs; ++z)
#pragma unroll
    for (int a = 0; a < NA; ++a) flat[a] += __ldcg(slice + ((size_t)z * NA + a) * THREADS + tid);
  return true;
}

// The f16 GEMMs' pipeline (lk_gemm_h, lk_gemm_w) over a block's `nst` stages: stage i multiplies (multiply(i, its
// tile)) while stage i + 1's weights are unpacked into the other tile of `tiles` (two of `wt` bytes; their loads were
// issued P stages before into raw's ring) and stage i + 1 + P's are loaded into the registers just freed, the
// activations LK_GH_STAGES - 1 stages ahead (load_acts(slot, stage)). One barrier a stage: after it the next tile is
// whole, and the tile and activation slot just read are free. `drain` runs before each stage's barrier (lk_gemm_w:
// its asynchronous products' wait) and `publish` after each wait for activations (lk_gemm_w: the async proxy's
// fence). The loop is unrolled by P, so that each stage's ring slot is known when compiled.
template <int P, class R, class Fetch, class Unpack, class Multiply, class LoadActs, class Drain, class Publish>
LK_DEVICE void lk_gh_pipeline(int nst, R (&raw)[P], unsigned char* tiles, int wt, const Fetch& fetch,
                              const Unpack& unpack, const Multiply& multiply, const LoadActs& load_acts,
                              const Drain& drain, const Publish& publish) {
#pragma unroll
  for (int s = 0; s < P; ++s)  // (the weights do not depend on the launch before: read before its wait)
    if (s < nst) fetch(s, raw[s]);
  lk_pdl_entry();
#pragma unroll
  for (int s = 0; s < LK_GH_STAGES; ++s) {
    if (s < nst) load_acts(s, s);
    lk_cp_commit();
  }
  if (nst > 0) unpack(0, raw[0], tiles);
  if (P < nst) fetch(P, raw[0]);
  lk_cp_wait<LK_GH_STAGES - 1>();
  publish();
  __syncthreads();
  for (int i0 = 0; i0 < nst; i0 += P)
#pragma unroll
    for (int j = 0; j < P; ++j) {
      const int i = i0 + j;
      if (i >= nst) break;
      multiply(i, tiles + (i & 1) * wt);
      if (i + 1 < nst) unpack(i + 1, raw[(j + 1) % P], tiles + ((i + 1) & 1) * wt);
      if (i + 1 + P < nst) fetch(i + 1 + P, raw[(j + 1) % P]);
      drain();
      lk_cp_wait<LK_GH_STAGES - 2>();  // stage i + 1's activations have landed
      publish();
      __syncthreads();
      if (i + LK_GH_STAGES < nst) load_acts(i % LK_GH_STAGES, i + LK_GH_STAGES);
      lk_cp_commit();
    }
}

// d += a b for one m16n8k16 tile of f16: a 16x16 (row-major fragments), b 16x8 (column-major), d f32.
LK_DEVICE void lk_mma_f16(float (&d)[4], const int (&a)[4], int b0, int b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One block's tile of lk_gemm_h's GEMM: outputs out0 .. out0 + BO - 1 of `n` (weight rows wbase + those of wg, under
// GLU of wu too) by activation rows act0 .. act0 + BN - 1 of `rows` (xh, k wide); y[r][o] the sum (+ bias[o]), or under
// GLU `act`'s gated activation of the gate and up sums (their biases, if any, `act`'s); where `yh` is not null also
// y's f16 copy there (lk_half_rows's values: the next GEMM's input without its launch). The plain GEMM's blocks and a
// mixture's grouped experts' (lk_moe_gemm_h) both run it.
template <class W, bool GLU, int BN, int BM, int P = lk_gemm_h_prefetch(BN)>
LK_DEVICE void lk_gemm_h_tile(const W& wg, const W& wu, size_t wbase, const __half* __restrict__ xh,
                              const float* __restrict__ bias, const lk_glu_act& act, float* __restrict__ y, int k,
                              int n, int rows, int out0, int act0, float* __restrict__ part, int* __restrict__ count,
                              lk_ksplit ks, __half* __restrict__ yh = nullptr) {
  using F = lk_fmt<W>;
  constexpr int U = 32 / F::E;                    // a 32-group's units
  constexpr int BO = lk_gemm_h_outputs(GLU, BM);  // output rows a block
  constexpr int KS = lk_gemm_h_k(BM);             // k a stage
  constexpr int ROW = lk_gemm_h_row(BM);          // a staged row's bytes
  constexpr int MT = BM / 32;                     // 16-row weight tiles a warp (2 warps across BM)
  constexpr int NT = BN / 32;                     // 8-row activation tiles a warp (4 warps across BN)
  constexpr int GROUPS = KS / 32;                 // 32-groups a stage's row
  constexpr int PIECES = KS / 8;                  // 16-byte pieces a stage's activation row
  constexpr int WT = BM * ROW;                    // a weight tile's bytes
  constexpr int AT = BN * ROW;                    // an activation stage's bytes
  static_assert(LK_GH_WARPS == 8, "the warps' layout below: 2 across the weight rows, 4 across the activation rows");
  static_assert(BM * GROUPS == LK_GH_WARPS * 32, "a thread unpacks one 32-group a stage");
  static_assert(NT >= 2 && NT % 2 == 0, "a warp takes its activation tiles in pairs (one ldmatrix a pair)");
  static_assert(!GLU || MT % 2 == 0, "under GLU a warp takes as many up tiles as gate tiles");
  static_assert(BN * PIECES % (LK_GH_WARPS * 32) == 0, "the activations' pieces spread evenly over the threads");
  static_assert(lk_gemm_h_smem(BM, BN) == 2 * WT + LK_GH_STAGES * AT, "the shared memory as shapes.cuh counts it");
  extern __shared__ __align__(16) unsigned char lk_smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int wm = warp >> 2, wn = warp & 3;
  const int kb = k / 32, kstages = (kb + GROUPS - 1) / GROUPS;
  // This block's stages: part ks.z of ks.zs along k (lk_gemm_h_split, lk_gemm_tail_split).
  const int per = (kstages + ks.zs - 1) / ks.zs, k0 = min(kstages, ks.z * per);
  const int nst = min(kstages, k0 + per) - k0;
  unsigned char* const acts = lk_smem + 2 * WT;

  // The thread's 32-group: tile row `row` (under GLU the first BO gate rows, then the same outputs' up rows), group gi
  // of each stage.
  const int row = tid / GROUPS, gi = tid % GROUPS;
  const W w = lk_pick(GLU && row >= BO, wg, wu);
  const size_t wrow = wbase + (size_t)min(out0 + row % BO, n - 1);
  // Stage i's units into registers (a ring of P stages: stage i in raw[i % P])...
  static_assert(P >= 1, "at least the next stage's weights are in flight");
  using Raw = typename F::Raw;
  Raw raw[P][U];
  auto fetch = [&](int i, Raw(&r)[U]) {
    const int b = min((k0 + i) * GROUPS + gi, kb - 1);
#pragma unroll
    for (int u = 0; u < U; ++u) r[u] = F::load(w, wrow, k, b * U + u);
  };
  // ... expanded into tile `wt` as f16, the group's 32 elements in order (zeros past k).
  auto unpack = [&](int i, const Raw(&r)[U], unsigned char* wt) {
    lk_gh_expand<W>(r, (k0 + i) * GROUPS + gi < kb, wt + row * ROW + gi * 64);
  };
  // The activations of stage kt into slot `slot`: BN rows of KS f16, PIECES 16-byte pieces a row, a thread the same
  // piece of rows r0, r0 + RS, ..; zeros past the rows or k.
  constexpr int RS = LK_GH_WARPS * 32 / PIECES;  // rows a pass
  const int r0 = tid / PIECES, piece = tid % PIECES;
  const __half* const xrow = xh + (size_t)(act0 + r0) * k + piece * 8;
  auto load_acts = [&](int slot, int i) {
    const int kt = k0 + i;
    unsigned char* s = acts + slot * AT + r0 * ROW + piece * 16;
    const int col = kt * KS + piece * 8;
#pragma unroll
    for (int i = 0; i < BN / RS; ++i) {
      const bool ok = act0 + r0 + RS * i < rows && col < k;
      lk_cp16(s + RS * i * ROW, ok ? xrow + (size_t)RS * i * k + kt * KS : xh, ok);
    }
  };

  // The warp's A tiles: under GLU MT / 2 of gate rows then the same rows of up, else MT of its BM / 2 rows.
  int arow[MT];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
    arow[mt] = GLU ? (mt / (MT / 2)) * BO + wm * (BO / 2) + (mt % (MT / 2)) * 16 : wm * (BM / 2) + mt * 16;
  // Stage kt's products: tile wt (its weights) against activation slot kt % LK_GH_STAGES.
  float acc[MT][NT][4] = {};
  auto multiply = [&](int i, const unsigned char* wt) {
    const unsigned char* sb = acts + (i % LK_GH_STAGES) * AT;
    const int steps = min(KS, k - (k0 + i) * KS) / 16;
#pragma unroll
    for (int kk = 0; kk < KS / 16; ++kk) {
      if (kk >= steps) break;
      int af[MT][4], bf[NT][2];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
        lk_ldmatrix4(af[mt], wt + (arow[mt] + (lane & 7) + 8 * ((lane >> 3) & 1)) * ROW + kk * 32 + 16 * (lane >> 4));
#pragma unroll
      for (int q = 0; q < NT / 2; ++q) {
        int r[4];
        lk_ldmatrix4(
            r, sb + (wn * NT * 8 + q * 16 + (lane & 7) + 8 * (lane >> 4)) * ROW + kk * 32 + 16 * ((lane >> 3) & 1));
        bf[2 * q][0] = r[0], bf[2 * q][1] = r[1], bf[2 * q + 1][0] = r[2], bf[2 * q + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < NT; ++j) lk_mma_f16(acc[mt][j], af[mt], bf[j][0], bf[j][1]);
    }
  };

  lk_gh_pipeline<P>(nst, raw, lk_smem, WT, fetch, unpack, multiply, load_acts, [] {}, [] {});
  // Split along k: the parts' sums meet (lk_gemm_parts).
  if (!lk_gemm_parts<MT * NT * 4, LK_GH_WARPS * 32>(&acc[0][0][0], part, count, ks)) return;
    // acc[mt][j][e]: tile row arow[mt] + g (+ 8 for e >= 2), activation row 2t (+ 1 for odd e) of the warp's tile j;
    // under GLU tile mt + MT / 2 holds the same outputs' up sums.
#pragma unroll
  for (int mt = 0; mt < (GLU ? MT / 2 : MT); ++mt)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int o = out0 + (GLU ? wm * (BO / 2) + mt * 16 : arow[mt]) + g + (e >= 2 ? 8 : 0);
        const int r = act0 + wn * NT * 8 + j * 8 + 2 * t + (e & 1);
        if (o >= n || r >= rows) continue;
        float v;
        if constexpr (GLU)
          v = lk_glu(acc[mt][j][e] + (act.bg ? act.bg[o] : 0.f), acc[mt + MT / 2][j][e] + (act.bu ? act.bu[o] : 0.f),
                     act);
        else
          v = acc[mt][j][e] + (bias ? bias[o] : 0.f);
        if (y) y[(size_t)r * n + o] = v;  // (null: only the f16 copy is read)
        if (yh) yh[(size_t)r * n + o] = __float2half_rn(v);
      }
}

// lk_gemm_h<W, GLU, BN, BM>: blockIdx.x the output tile, blockIdx.y the activation tile, blockIdx.z the part of k (a
// split GEMM's; its sums meet in `part`, counted in `count`); `yh` (or null) y's f16 copy.
template <class W, bool GLU, int BN, int BM>
__global__ void __launch_bounds__(LK_GH_WARPS * 32, lk_gemm_h_blocks(BM, BN))
    lk_gemm_h(W wg, W wu, const __half* __restrict__ xh, const float* __restrict__ bias, float* __restrict__ y, int k,
              int n, int rows, float* __restrict__ part, int* __restrict__ count, __half* __restrict__ yh) {
  lk_gemm_h_tile<W, GLU, BN, BM>(wg, wu, 0, xh, bias, lk_glu_act{nullptr, nullptr, 0.f, 1.f}, y, k, n, rows,
                                 blockIdx.x * lk_gemm_h_outputs(GLU, BM), blockIdx.y * BN, part, count,
                                 lk_ksplit_grid(), yh);
}

// A grouped GEMM's matrices (lk_gemm_h_parts, lk_gemm_w_parts): up to 3 projections of one input in one format (a
// chunk's q, k and v), each with its bias and output; n 0 past the group's. One grid over all their output tiles, so
// that k's and v's narrow grids (1,024 rows on the 8B: 64 tiles of 128 activation rows) run beside q's and the GPU sees
// one launch's tail instead of three.
template <class W>
struct lk_gemm_group {
  W w[3];
  const float* bias[3];
  float* y[3];
  int n[3];
};

// One of three values by the part `p` (a kernel parameter indexed at run time goes to local memory).
template <class T>
LK_DEVICE T lk_part_of(int p, const T& a, const T& b, const T& c) {
  return p == 0 ? a : p == 1 ? b : c;
}

// The part of a grouped GEMM that output tile `tile` lies in (`bo` outputs a tile, each part's tiles after those of
// the parts before it), its matrix, bias, output and rows, and the tile's first output within it.
template <class W>
struct lk_gemm_part {
  W w;
  const float* bias;
  float* y;
  int n, out0;
};
template <class W>
LK_DEVICE lk_gemm_part<W> lk_gemm_part_at(const lk_gemm_group<W>& g, int bo, int tile) {
  const int t0 = (g.n[0] + bo - 1) / bo, t1 = (g.n[1] + bo - 1) / bo;
  const int p = tile < t0 ? 0 : tile < t0 + t1 ? 1 : 2;
  return {lk_pick(p == 2, lk_pick(p == 1, g.w[0], g.w[1]), g.w[2]), lk_part_of(p, g.bias[0], g.bias[1], g.bias[2]),
          lk_part_of(p, g.y[0], g.y[1], g.y[2]), lk_part_of(p, g.n[0], g.n[1], g.n[2]),
          (tile - lk_part_of(p, 0, t0, t0 + t1)) * bo};
}

// lk_gemm_h_parts<W, BN, BM>: lk_gemm_h over a group's matrices, its units (lk_gemm_unit) along blockIdx.x; gx the
// group's output tiles.
template <class W, int BN, int BM>
__global__ void __launch_bounds__(LK_GH_WARPS * 32, lk_gemm_h_blocks(BM, BN))
    lk_gemm_h_parts(lk_gemm_group<W> g, const __half* __restrict__ xh, int k, int rows, int gx, int full, int split,
                    float* __restrict__ part, int* __restrict__ count) {
  lk_ksplit ks;
  const int tile = lk_gemm_unit(blockIdx.x, full, split, ks);
  const lk_gemm_part<W> t = lk_gemm_part_at(g, lk_gemm_h_outputs(false, BM), tile % gx);
  lk_gemm_h_tile<W, false, BN, BM>(t.w, t.w, 0, xh, t.bias, lk_glu_act{nullptr, nullptr, 0.f, 1.f}, t.y, k, t.n,
                                   rows, t.out0, tile / gx * BN, part, count, ks);
}

// A mixture's chunk's expert projections on the tensor cores (gemm_half): its (row, slot) pairs grouped by expert
// (lk_moe_group; xg their activations' f16 copy, out in the same grouped order), each expert e's count[e] pairs from
// position first[e] against e's rows of the 3-D tensors (wbase e * n), the experts' tiles of BN pairs one after the
// other along blockIdx.y (the grid sized for the most there can be: a block past the last returns). GLU: gate and up
// paired, `act`'s biases (their expert's rows) and clamp; else + bias's expert's row where not null. P: the stages of
// weights in flight (bench/moe_gemm_bench.cu times the others).
template <class W, bool GLU, int BN, int BM, int P = lk_gemm_h_prefetch(BN)>
__global__ void __launch_bounds__(LK_GH_WARPS * 32, lk_gemm_h_blocks(BM, BN))
    lk_moe_gemm_h(W wg, W wu, const __half* __restrict__ xg, const int* __restrict__ count,
                  const int* __restrict__ first, float* __restrict__ out, int k, int n, int experts, lk_glu_act act,
                  const float* __restrict__ bias) {
  lk_pdl_entry();  // (the counts are the launch before's)
  int t = blockIdx.y, e = 0;
  for (; e < experts; ++e) {
    const int tiles = (count[e] + BN - 1) / BN;
    if (t < tiles) break;
    t -= tiles;
  }
  if (e == experts) return;  // (the whole block)
  const size_t base = (size_t)e * n, at = (size_t)first[e];
  const lk_glu_act mine{act.bg ? act.bg + base : nullptr, act.bu ? act.bu + base : nullptr, act.limit, act.alpha};
  lk_gemm_h_tile<W, GLU, BN, BM, P>(wg, wu, base, xg + at * k, bias ? bias + base : nullptr, mine, out + at * n, k, n,
                                    count[e], blockIdx.x * lk_gemm_h_outputs(GLU, BM), t * BN, nullptr, nullptr,
                                    lk_ksplit{0, 1, 0});
}

#endif  // LK_WITH_GEMM_HALF
