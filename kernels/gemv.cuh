// The GEMV: R activation rows times a matrix, RPW output rows a warp, the weights streamed once in 16-byte units.

// The units of weights a lane loads before it uses the first of them, LK_GEMV_AHEAD (kernels/shapes.cuh: memory-level
// parallelism: one 16-byte load in flight a lane cannot cover HBM's latency at the warps an SM holds).

// EARLY (under pdl): a kernel's sums wait for the launch before it (lk_pdl_entry) only once their first round of
// weights is in flight. The weights are constants, so their first DRAM round trip runs under the previous launch's
// tail (a GEMV's blocks are resident while the small launch before it -- a norm, a fold, a quantize -- runs). A warp
// waits before it reads an activation, in the first round only (session 26: called every round, the wait and the
// trigger cost the 0.6B's decode ~7%); a kernel calls lk_pdl_entry again (a no-op past the first) before any write
// that a warp without rows could reach.

// A decode step's activations quantized once (gemv_prequant): lk_quantize_i8<false>'s copy of `rows` rows, row-major:
// the words' int8 values [P][rows][k], then their f32 scales [P][rows][k / 32]; a GEMV reads its R rows from `row`
// (an expert launch's pair: lk_x_at). As a GEMV kernel's input (its last template argument). norm_fold: a copy of
// one row written unscaled by the projection before (lk_gemv_fold), `spans` its 32-groups' sums of squares, from
// which the sums are scaled by the norm's 1 / sqrt(mean + eps) (lk_xq_scale); null otherwise.
struct lk_xq {
  const int* q;
  int rows, row;
  const float* spans = nullptr;
  float eps = 0.f;
};
// A GEMV kernel's input parameter for its input type X: activations as a read-only (__restrict__) pointer.
template <class X>
struct lk_in {
  using type = X;
};
template <>
struct lk_in<const lk_act*> {
  using type = const lk_act* __restrict__;
};
// Activation row j of a GEMV's input (k wide), either kind.
LK_DEVICE const lk_act* lk_x_at(const lk_act* x, size_t j, int k) {
  return x + j * k;
}
LK_DEVICE lk_xq lk_x_at(lk_xq x, size_t j, int) {
  x.row += (int)j;
  return x;
}

// N consecutive f32 activations (16-byte aligned; the int8 numerics' activations are f32) into v, zeros where !ok.
template <int N, class A>
LK_DEVICE void lk_load_f32(const A* p, bool ok, float (&v)[N]) {
#pragma unroll
  for (int j = 0; j < N / 4; ++j) {
    const float4 f = ok ? reinterpret_cast<const float4*>(p)[j] : make_float4(0.f, 0.f, 0.f, 0.f);
    v[4 * j] = f.x;
    v[4 * j + 1] = f.y;
    v[4 * j + 2] = f.z;
    v[4 * j + 3] = f.w;
  }
}

// A unit's 16 int8 activations (4 packed words) against the RPW rows' 16 weights: each row's integer sum, scaled by
// the activations' word scale d, added to sum[i].
template <int RPW>
LK_DEVICE void lk_dp4a_rows(const int4 (&wq)[RPW], int a0, int a1, int a2, int a3, float d, float (&sum)[RPW]) {
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    int s = __dp4a(wq[i].x, a0, 0);
    s = __dp4a(wq[i].y, a1, s);
    s = __dp4a(wq[i].z, a2, s);
    s = __dp4a(wq[i].w, a3, s);
    sum[i] += d * (float)s;
  }
}

// One unit of row r's int8 sums, its activations quantized here: the lane's 16 values with its neighbour's (the
// unit's other half of the 32-block: lanes pair as units do), by the rule of lk_i8_scale / lk_i8_q, word by word (the
// residual the next word's input). Uniform over the warp (the pairs' shuffles see every lane).
template <int RPW, int R>
LK_DEVICE void lk_i8_unit(const lk_act* __restrict__ x, int k, int r, int u, bool ok, const int4 (&wq)[RPW],
                          float (&sum)[RPW]) {
  float v[16];
  lk_load_f32(x + (size_t)r * k + (size_t)u * 16, ok, v);
#pragma unroll
  for (int word = 0; word < (LK_INT8 == 2 ? 2 : 1); ++word) {
    float amax = 0.f;
#pragma unroll
    for (int e = 0; e < 16; ++e) amax = fmaxf(amax, fabsf(v[e]));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
    const float d = lk_i8_scale(amax), inv = lk_i8_inv(amax);
    int q[16], p[4];
#pragma unroll
    for (int e = 0; e < 16; ++e) q[e] = lk_i8_q(v[e], inv);
#pragma unroll
    for (int j = 0; j < 4; ++j) p[j] = lk_i8_pack(q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]);
    lk_dp4a_rows(wq, p[0], p[1], p[2], p[3], d, sum);
#pragma unroll
    for (int e = 0; e < 16; ++e) v[e] -= d * (float)q[e];  // the residual, the second word's input
  }
}

// The same from gemv_prequant's copy: the unit's words and their scales read, not computed.
template <int RPW, int R>
LK_DEVICE void lk_i8_unit(lk_xq x, int k, int r, int u, bool ok, const int4 (&wq)[RPW], float (&sum)[RPW]) {
  constexpr int P = LK_INT8 == 2 ? 2 : 1;
  const signed char* xq = reinterpret_cast<const signed char*>(x.q);
  const float* xs = reinterpret_cast<const float*>(xq + (size_t)P * x.rows * k);
#pragma unroll
  for (int p = 0; p < P; ++p) {
    const size_t at = (size_t)p * x.rows + x.row + r;
    const int4 a = ok ? __ldg(reinterpret_cast<const int4*>(xq + at * k) + u) : make_int4(0, 0, 0, 0);
    const float d = ok ? __ldg(xs + at * (k / 32) + u / 2) : 0.f;
    lk_dp4a_rows(wq, a.x, a.y, a.z, a.w, d, sum);
  }
}

// A sum's rounds from unit `start` to `units`, `step` apart: load(round, v) asks the round at unit v (its loads in
// flight together), use(round, v) adds its products, `first` runs once after the first loads (the wait on the launch
// before, lk_pdl_entry_gemv, with what must follow it): a round's weights, then its products. (Session 33's pipelined
// rounds, round r + 1's weights asked before round r's products, won 12-15% in gemv_bench and lost in every lane,
// 0.92-0.98x on the 8B's Q4_K_M and Q8_0 in sessions 33-36: removed.)
// The first round may leave out its last slots (LK_GEMV_STAGGER: `short_by` units fewer; the next round starts there).
template <class Round, class Load, class Use, class First>
LK_DEVICE void lk_rounds(int start, int units, int step, Load&& load, Use&& use, First&& first, int short_by = 0) {
  for (int v = start; v < units; v += step) {
    Round raw;
    load(raw, v);
    if (v == start) first();  // (once: the wait and the trigger are instructions each round)
    use(raw, v);
    if (v == start) v -= short_by;
  }
}
// A round of a GEMV's sums: A units of RPW rows' weights.
template <class Raw, int A, int RPW>
struct lk_gemv_round {
  Raw r[A][RPW];
};

// LK_GEMV_STAGGER (kernels/shapes.cuh): by how much an odd warp of a block shortens its first round (units a lane
// `stride` apart: lk_rounds' short_by), where the warp's row from unit `from` takes it no more rounds so (the 8B's
// 14,336-wide Q6_K down, 3.5 rounds; a row of whole rounds would take one more); 0 otherwise, and always without the
// switch or where a round is A <= LK_GEMV_STAGGER units (gemv_short's).
template <int A>
LK_DEVICE int lk_gemv_stagger(int stride, int from, int units) {
  if (LK_GEMV_STAGGER <= 0 || LK_GEMV_STAGGER >= A || ((threadIdx.x >> 5) & 1) == 0) return 0;
  const int step = A * stride, cut = LK_GEMV_STAGGER * stride, left = units - from;
  const int rounds = (left + step - 1) / step, staggered = 1 + max(0, left - (step - cut) + step - 1) / step;
  return staggered == rounds ? cut : 0;
}
// Whether slot j of the round from unit v0 is one that the first round (from `start`) leaves out under short_by.
template <int A>
LK_DEVICE bool lk_gemv_skips(int short_by, int v0, int start, int j) {
  return LK_GEMV_STAGGER > 0 && short_by != 0 && v0 == start && j >= A - LK_GEMV_STAGGER;
}

// The int8 numerics' sums over a Q8_0 matrix (dp4a): as lk_gemv_sums, each unit's activations as int8 words
// (lk_i8_unit: quantized in registers, or read from gemv_prequant's copy: the same integers, scales and sums) times
// the weights in integers. The loop is uniform over the warp so that the pairs' shuffles see every lane.
template <int RPW, int R, int STRIDE, class X, bool EARLY = false, int A = LK_GEMV_AHEAD>
LK_DEVICE void lk_gemv_sums_i8(const lk_q8& m, typename lk_in<X>::type x, int k, int n, int row0, lk_acc (&acc)[RPW][R],
                               int first) {
  using Round = lk_gemv_round<lk_fmt<lk_q8>::Raw, A, RPW>;
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = 0;
  const int units = k / 16, short_by = lk_gemv_stagger<A>(STRIDE, first - (first & 31), units);
  auto load = [&](Round& raw, int base0) {  // a round's weights, its loads in flight together
#pragma unroll
    for (int j = 0; j < A; ++j)
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        const int u = base0 + j * STRIDE + first;
        if (u < units && !lk_gemv_skips<A>(short_by, base0, 0, j))
          raw.r[j][i] = lk_fmt<lk_q8>::load(m, (size_t)min(row0 + i, n - 1), k, u);
      }
  };
  auto use = [&](const Round& raw, int base0) {  // then their products in order
#pragma unroll
    for (int j = 0; j < A; ++j) {
      const int base = base0 + j * STRIDE;
      if (base >= units || lk_gemv_skips<A>(short_by, base0, 0, j)) break;  // (uniform over the warp)
      const int u = base + first;
      const bool ok = u < units;
      int4 wq[RPW];
      float ws[RPW];
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        wq[i] = ok ? raw.r[j][i].q : make_int4(0, 0, 0, 0);
        ws[i] = ok ? __half2float(raw.r[j][i].s) : 0.f;
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float sum[RPW];
#pragma unroll
        for (int i = 0; i < RPW; ++i) sum[i] = 0.f;
        lk_i8_unit<RPW, R>(x, k, r, u, ok, wq, sum);
#pragma unroll
        for (int i = 0; i < RPW; ++i) acc[i][r] += ws[i] * sum[i];
      }
    }
  };
  lk_rounds<Round>(
      0, units, STRIDE * A, load, use,
      [] {
        if constexpr (EARLY) lk_pdl_entry_gemv();
      },
      short_by);
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = lk_warp_sum(acc[i][r]);
}

#if LK_WITH_BLOCKS
// One 32-group of activation row r against the RPW weight rows' units (lk_fmt<lk_blk<T>>::dot), added to acc[.][r]:
// the lane quantizes the group itself (a 32-block in one lane: by the rule of lk_i8_scale / lk_i8_q, word by word, the
// residual the next word's input)...
template <class F, int RPW, int R>
LK_DEVICE void lk_i8b_unit(const lk_act* __restrict__ x, int k, int r, int u, const typename F::Raw (&raw)[RPW],
                           lk_acc (&acc)[RPW][R]) {
  float v[32];
  lk_load_f32(x + (size_t)r * k + (size_t)u * 32, true, v);
#pragma unroll
  for (int word = 0; word < (LK_INT8 == 2 ? 2 : 1); ++word) {
    float amax = 0.f;
#pragma unroll
    for (int e = 0; e < 32; ++e) amax = fmaxf(amax, fabsf(v[e]));
    const float d = lk_i8_scale(amax), inv = lk_i8_inv(amax);
    int q[32], a[8];
#pragma unroll
    for (int e = 0; e < 32; ++e) q[e] = lk_i8_q(v[e], inv);
#pragma unroll
    for (int c = 0; c < 8; ++c) a[c] = lk_i8_pack(q[4 * c], q[4 * c + 1], q[4 * c + 2], q[4 * c + 3]);
#pragma unroll
    for (int i = 0; i < RPW; ++i) acc[i][r] += F::dot(raw[i], a, d);
#pragma unroll
    for (int e = 0; e < 32; ++e) v[e] -= d * (float)q[e];
  }
}

// ... or reads its words and scales from gemv_prequant's copy (lk_quantize_i8<false>'s layout): the same integers.
template <class F, int RPW, int R>
LK_DEVICE void lk_i8b_unit(lk_xq x, int k, int r, int u, const typename F::Raw (&raw)[RPW], lk_acc (&acc)[RPW][R]) {
  constexpr int P = LK_INT8 == 2 ? 2 : 1;
  const signed char* xq = reinterpret_cast<const signed char*>(x.q);
  const float* xs = reinterpret_cast<const float*>(xq + (size_t)P * x.rows * k);
#pragma unroll
  for (int p = 0; p < P; ++p) {
    const size_t at = (size_t)p * x.rows + x.row + r;
    const int4* w = reinterpret_cast<const int4*>(xq + at * k + (size_t)u * 32);
    const int4 lo = __ldg(w), hi = __ldg(w + 1);
    const int a[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    const float d = __ldg(xs + at * (k / 32) + u);
#pragma unroll
    for (int i = 0; i < RPW; ++i) acc[i][r] += F::dot(raw[i], a, d);
  }
}

// The int8 numerics' sums over a block-format matrix (dp4a): as lk_gemv_sums_f, a lane a 32-group, its activations
// as int8 words (lk_i8b_unit) times the codes in integers. The 256-block headers the K-quants' lanes share are
// loaded a word a lane and handed around (lk_fmt::share), so the rounds are uniform over the warp: `first` is the
// lane plus a multiple of 32 (a split GEMV's warps' offsets), and a lane past the row's end takes part, adding nothing.
template <int T, int RPW, int R, int STRIDE, class X, bool EARLY = false, int A = LK_GEMV_AHEAD>
LK_DEVICE void lk_gemv_sums_i8b(const lk_blk<T>& m, typename lk_in<X>::type x, int k, int n, int row0,
                                lk_acc (&acc)[RPW][R], int first) {
  using F = lk_fmt<lk_blk<T>>;
  using Round = lk_gemv_round<typename F::Raw, A, RPW>;
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = 0;
  const int units = k / 32, lane = first & 31, start = first - lane;
  const int short_by = lk_gemv_stagger<A>(STRIDE, start, units);
  auto load = [&](Round& raw, int v0) {  // a round's weights, its loads in flight together
#pragma unroll
    for (int j = 0; j < A; ++j)
#pragma unroll
      for (int i = 0; i < RPW; ++i)
        if (v0 + j * STRIDE + lane < units && !lk_gemv_skips<A>(short_by, v0, start, j))
          raw.r[j][i] = F::load_part(m, (size_t)min(row0 + i, n - 1), k, v0 + lane, j * STRIDE);
  };
  auto use = [&](Round& raw, int v0) {  // then their products in order
#pragma unroll
    for (int j = 0; j < A; ++j) {
      const int v = v0 + j * STRIDE;
      if (v >= units || lk_gemv_skips<A>(short_by, v0, start, j)) break;  // (uniform over the warp)
#pragma unroll
      for (int i = 0; i < RPW; ++i) F::share(raw.r[j][i]);
      if (v + lane < units)
#pragma unroll
        for (int r = 0; r < R; ++r) lk_i8b_unit<F, RPW, R>(x, k, r, v + lane, raw.r[j], acc);
    }
  };
  lk_rounds<Round>(
      start, units, STRIDE * A, load, use,
      [] {
        if constexpr (EARLY) lk_pdl_entry_gemv();
      },
      short_by);
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = lk_warp_sum(acc[i][r]);
}

// The int8 copy's row as a block stages it in shared memory (lk_xq_stage; the fused gate/up GEMV's joint rounds):
// word p's unit u in two 16-byte halves, at 16-byte slots 2p units + u and (2p + 1) units + u (so a warp's reads are
// contiguous), then the scales, word p's unit u's at p units + u. A unit is read by LDS, a fixed short latency, where
// the copy's LDG hits L1 behind the weights' misses and each unit's read waits on its products (session 32: the 8B's
// Q4_K gate/up pair 19.6 -> 18.6 us in gemv_bench, bit for bit). Its addresses are taken from the shared array itself
// each time (through a pointer kept in a variable the compiler read it as generic memory: session 32, call 7).
LK_DEVICE unsigned char* lk_xs_smem() {
  extern __shared__ __align__(16) unsigned char lk_smem_xs[];
  return lk_smem_xs;
}
// Every thread of the block calls it, after the wait on the launch that wrote the copy; the block's dynamic shared
// memory holds kernels/shapes.cuh's lk_gemv_glu_smem bytes.
LK_DEVICE void lk_xq_stage(lk_xq x, int k) {
  constexpr int P = LK_INT8 == 2 ? 2 : 1;
  const int units = k / 32;
  int4* q = reinterpret_cast<int4*>(lk_xs_smem());
  float* s = reinterpret_cast<float*>(lk_xs_smem() + (size_t)P * k);
  const signed char* xq = reinterpret_cast<const signed char*>(x.q);
  const float* xs = reinterpret_cast<const float*>(xq + (size_t)P * x.rows * k);
#pragma unroll
  for (int p = 0; p < P; ++p) {
    const int4* src = reinterpret_cast<const int4*>(xq + ((size_t)p * x.rows + x.row) * k);
    for (int c = threadIdx.x; c < 2 * units; c += blockDim.x) q[(2 * p + (c & 1)) * units + (c >> 1)] = __ldg(src + c);
    const float* ss = xs + ((size_t)p * x.rows + x.row) * units;
    for (int c = threadIdx.x; c < units; c += blockDim.x) s[p * units + c] = __ldg(ss + c);
  }
  __syncthreads();
}
// Word p of unit u of the staged row (`units` = k / 32): its 8 words of codes and its scale.
LK_DEVICE void lk_xs_unit(int units, int p, int u, int (&a)[8], float& d) {
  const int4* q = reinterpret_cast<const int4*>(lk_xs_smem());
  const int4 lo = q[2 * p * units + u], hi = q[(2 * p + 1) * units + u];
  a[0] = lo.x, a[1] = lo.y, a[2] = lo.z, a[3] = lo.w, a[4] = hi.x, a[5] = hi.y, a[6] = hi.z, a[7] = hi.w;
  d = reinterpret_cast<const float*>(lk_xs_smem() + (size_t)(LK_INT8 == 2 ? 2 : 1) * units * 32)[p * units + u];
}

// The fused gate/up GEMV's sums over two block-format matrices of one shape (lk_glu_joint): as lk_gemv_sums_i8b for
// each, each round's weights of both in flight together (one DRAM round trip a round, not two; each matrix's sums in
// the order lk_gemv_sums_i8b adds them, so the same numbers). STAGE (glu_stage), over the int8 copy: the block stages
// it (lk_xq_stage), so every warp of the block calls it, those without rows too. A as lk_gemv_sums_i8b's.
template <int T, int RPW, int R, class X, bool STAGE = false, int A = LK_GEMV_AHEAD>
LK_DEVICE void lk_gemv_sums_i8b2(const lk_blk<T>& m0, const lk_blk<T>& m1, typename lk_in<X>::type x, int k, int n,
                                 int row0, lk_acc (&acc0)[RPW][R], lk_acc (&acc1)[RPW][R]) {
  using F = lk_fmt<lk_blk<T>>;
  using Round = lk_gemv_round<typename F::Raw, 2 * A, RPW>;  // (both matrices': the first's units, then the second's)
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc0[i][r] = acc1[i][r] = 0;
  const int units = k / 32, lane = threadIdx.x & 31;
  constexpr bool kStaged = STAGE && std::is_same_v<X, lk_xq> && R == 1;
  auto load = [&](Round& raw, int v0) {
#pragma unroll
    for (int j = 0; j < A; ++j)
#pragma unroll
      for (int i = 0; i < RPW; ++i)
        if (v0 + j * 32 + lane < units) {
          const size_t row = (size_t)min(row0 + i, n - 1);
          raw.r[j][i] = F::load_part(m0, row, k, v0 + lane, j * 32);
          raw.r[A + j][i] = F::load_part(m1, row, k, v0 + lane, j * 32);
        }
  };
  auto first = [&] {  // (EARLY: the first round's weights in flight under the launch before; once)
    lk_pdl_entry_gemv();
    if constexpr (kStaged) lk_xq_stage(x, k);
  };
  auto use = [&](Round& raw, int v0) {
#pragma unroll
    for (int j = 0; j < A; ++j) {
      const int v = v0 + j * 32;
      if (v >= units) break;  // (uniform over the warp)
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        F::share(raw.r[j][i]);
        F::share(raw.r[A + j][i]);
      }
      if (v + lane < units) {
        if constexpr (kStaged) {  // (R 1; each word read once for both matrices, their sums in the same order)
#pragma unroll
          for (int p = 0; p < (LK_INT8 == 2 ? 2 : 1); ++p) {
            int a[8];
            float d;
            lk_xs_unit(units, p, v + lane, a, d);
#pragma unroll
            for (int i = 0; i < RPW; ++i) {
              acc0[i][0] += F::dot(raw.r[j][i], a, d);
              acc1[i][0] += F::dot(raw.r[A + j][i], a, d);
            }
          }
        } else {
#pragma unroll
          for (int r = 0; r < R; ++r) {
            lk_i8b_unit<F, RPW, R>(x, k, r, v + lane, raw.r[j], acc0);
            lk_i8b_unit<F, RPW, R>(x, k, r, v + lane, raw.r[A + j], acc1);
          }
        }
      }
    }
  };
  lk_rounds<Round>(0, units, 32 * A, load, use, first);  // (every warp takes part in the staging)
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      acc0[i][r] = lk_warp_sum(acc0[i][r]);
      acc1[i][r] = lk_warp_sum(acc1[i][r]);
    }
}
#endif  // LK_WITH_BLOCKS

// The sums of a warp's RPW output rows from row0 (clamped to n) over R activation rows, before the warp's reduction:
// the lanes stride over the rows' 16-byte units, so a warp reads 512 contiguous bytes of a row at a time.
// A split-K GEMV's warps share rows: each takes every STRIDE-th unit from `first`.
template <class M, int RPW, int R, int STRIDE, bool EARLY = false, int A = LK_GEMV_AHEAD>
LK_DEVICE void lk_gemv_sums_f(const M& m, const lk_act* __restrict__ x, int k, int n, int row0, lk_acc (&acc)[RPW][R],
                              int first) {
  constexpr int E = lk_fmt<M>::E;
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = 0;
  const int units = k / E;
  for (int u0 = first; u0 < units; u0 += STRIDE * A) {
    // The weights of A units first (loads in flight together), then their products in order.
    typename lk_fmt<M>::Raw raw[A][RPW];
#pragma unroll
    for (int j = 0; j < A; ++j)
#pragma unroll
      for (int i = 0; i < RPW; ++i)
        if (u0 + j * STRIDE < units) raw[j][i] = lk_fmt<M>::load(m, (size_t)min(row0 + i, n - 1), k, u0 + j * STRIDE);
    if constexpr (EARLY)
      if (u0 == first) lk_pdl_entry_gemv();  // (once)
#pragma unroll
    for (int j = 0; j < A; ++j) {
      const int u = u0 + j * STRIDE;
      if (u >= units) break;
      float w[RPW][E];
#pragma unroll
      for (int i = 0; i < RPW; ++i) lk_fmt<M>::expand(raw[j][i], w[i]);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        lk_acc xv[E];
        lk_load<E>(x + (size_t)r * k + u * E, xv);
#pragma unroll
        for (int i = 0; i < RPW; ++i) {
          lk_acc s = 0;
#pragma unroll
          for (int e = 0; e < E; ++e) s += (lk_acc)w[i][e] * xv[e];
          acc[i][r] += s;
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = lk_warp_sum(acc[i][r]);
}

// norm_fold: a warp's sums over a copy written unscaled, times the norm's 1 / sqrt(mean(x^2) + eps) from its 32-groups'
// sums of squares (summed in one order by every warp: the same scale for every row, bitwise stable); a no-op where
// the copy is a plain one.
// (lk_xq_norm: that scale, once a warp; the fused gate/up GEMVs scale both matrices' sums by it)
LK_DEVICE float lk_xq_norm(const lk_xq& x, int k) {
  float ss = 0.f;
  for (int i = threadIdx.x & 31; i < k / 32; i += 32) ss += __ldcg(x.spans + i);
  return 1.f / sqrtf(lk_warp_sum(ss) / (float)k + x.eps);
}
template <int RPW, int R>
LK_DEVICE void lk_xq_scale(float s, lk_acc (&acc)[RPW][R]) {
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] *= s;
}
template <int RPW, int R>
LK_DEVICE void lk_xq_scale(const lk_xq& x, int k, lk_acc (&acc)[RPW][R]) {
  if (x.spans) lk_xq_scale(lk_xq_norm(x, k), acc);
}
template <int RPW, int R>
LK_DEVICE void lk_xq_scale(const lk_xq& x, int k, lk_acc (&a)[RPW][R], lk_acc (&b)[RPW][R]) {
  if (!x.spans) return;
  const float s = lk_xq_norm(x, k);
  lk_xq_scale(s, a), lk_xq_scale(s, b);
}

// The sums by the lane's numerics: int8 products over Q8_0 and block-format matrices under LK_INT8 (Q8_0's from a
// quantized copy where the input is an lk_xq), else dequantized f32/f64 ones.
// (EARLY: the wait after the first round's weight loads, above; A: the units a lane has in flight, LK_GEMV_AHEAD.)
template <class M, int RPW, int R, int STRIDE = 32, bool EARLY = false, int A = LK_GEMV_AHEAD>
LK_DEVICE void lk_gemv_sums(const M& m, lk_xq x, int k, int n, int row0, lk_acc (&acc)[RPW][R],
                            int first = threadIdx.x & 31) {
#if LK_WITH_BLOCKS
  if constexpr (lk_blk_type<M>::value != 0)
    lk_gemv_sums_i8b<lk_blk_type<M>::value, RPW, R, STRIDE, lk_xq, EARLY, A>(m, x, k, n, row0, acc, first);
  else
#endif
    lk_gemv_sums_i8<RPW, R, STRIDE, lk_xq, EARLY, A>(m, x, k, n, row0, acc, first);  // (a copy feeds int8's GEMVs)
  lk_xq_scale(x, k, acc);
}
template <class M, int RPW, int R, int STRIDE = 32, bool EARLY = false, int A = LK_GEMV_AHEAD>
LK_DEVICE void lk_gemv_sums(const M& m, const lk_act* __restrict__ x, int k, int n, int row0, lk_acc (&acc)[RPW][R],
                            int first = threadIdx.x & 31) {
  if constexpr (LK_INT8 > 0 && std::is_same_v<M, lk_q8>)
    lk_gemv_sums_i8<RPW, R, STRIDE, const lk_act*, EARLY, A>(m, x, k, n, row0, acc, first);
#if LK_WITH_BLOCKS
  else if constexpr (LK_INT8 > 0 && lk_blk_type<M>::value != 0)
    lk_gemv_sums_i8b<lk_blk_type<M>::value, RPW, R, STRIDE, const lk_act*, EARLY, A>(m, x, k, n, row0, acc, first);
#endif
  else
    lk_gemv_sums_f<M, RPW, R, STRIDE, EARLY, A>(m, x, k, n, row0, acc, first);
}

// The first of the calling warp's RPW output rows (n or past it: the warp has none): a block's warps in order, a GEMV's
// and an expert launch's alike.
template <int RPW>
LK_DEVICE int lk_gemv_row0() {
  return (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * RPW;
}

// Rows [row0, row0 + RPW) of y (R rows of n) from a warp's reduced sums, plus the bias.
template <int RPW, int R>
LK_DEVICE void lk_gemv_store(const lk_acc (&acc)[RPW][R], const float* __restrict__ bias, lk_act* __restrict__ y, int n,
                             int row0) {
  if ((threadIdx.x & 31) != 0) return;
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    const int row = row0 + i;
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (row < n) y[(size_t)r * n + row] = (lk_act)(acc[i][r] + (bias ? (lk_acc)bias[row] : (lk_acc)0));
  }
}

// y[r][j] = sum_i W[j][i] * x[r][i] (+ bias[j]) for r < R, j < n: x is R rows of k, y R rows of n. A warp takes RPW
// consecutive output rows; the sums stay in lk_acc. A: lk_gemv_sums's units in flight.
template <class M, int RPW, int R, class X, int A = LK_GEMV_AHEAD>
LK_DEVICE void lk_gemv_rows(const M& m, typename lk_in<X>::type x, const float* __restrict__ bias,
                            lk_act* __restrict__ y, int k, int n) {
  const int row0 = lk_gemv_row0<RPW>();
  if (row0 >= n) return;  // the whole warp
  lk_acc acc[RPW][R];
  lk_gemv_sums<M, RPW, R, 32, true, A>(m, x, k, n, row0, acc);
  lk_gemv_store<RPW, R>(acc, bias, y, n, row0);
}

// lk_gemv, lk_gemv_split and lk_gemv_glu take a chunk's slabs of R activation rows along y: slab blockIdx.y's x and y
// rows from blockIdx.y * R (the decode step's one slab: y 0).
// A (gemv_short): the units a lane has in flight; a GEMV whose rows are one or two units a lane leaves the rest of
// its LK_GEMV_AHEAD slots empty, so it is instantiated with A that many and LK_GEMV_AHEAD / A times the rows a warp:
// the same registers holding that many rows' weights in flight (the same sums a row, in the same order).
template <class M, int RPW, int R, class X = const lk_act*, int A = LK_GEMV_AHEAD>
__global__ void __launch_bounds__(256)
    lk_gemv(M m, typename lk_in<X>::type x, const float* __restrict__ bias, lk_act* __restrict__ y, int k, int n) {
  const size_t slab = (size_t)blockIdx.y * R;
  lk_gemv_rows<M, RPW, R, X, A>(m, lk_x_at(x, slab, k), bias, y + slab * n, k, n);
}

// The GEMV with the norm after it folded in (fuse_norm): the launch's last block then adds y to the residual and norms
// it (lk_norm_after).
template <class M, int RPW, int R, class X = const lk_act*>
__global__ void __launch_bounds__(256) lk_gemv_norm(M m, typename lk_in<X>::type x, const float* __restrict__ bias,
                                                    lk_act* __restrict__ y, int k, int n, lk_norm_tail tail) {
  lk_gemv_rows<M, RPW, R, X>(m, x, bias, y, k, n);
  lk_pdl_entry();
  lk_norm_after(tail, y, R);
}

// norm_fold's counters: the blocks of a span of LK_NORM_SPAN output rows that are done (its last block resets it). One
// such launch runs at a time (side streams leave launches with a tail alone).
__device__ int lk_span_done[LK_NORM_SPANS_MAX];

// The end of one 32-group of a folded projection's output (norm_fold), by lanes 8j .. 8j + 7 of a warp whose every lane
// calls it (lane l the 4 values at column c, `ok` false past the warp's groups, with zeros): `a` (the projection's
// values) added to `v` (the residual t.x's, lk_fold_group_in) as lk_add_rmsnorm adds them and stored, the group's int8
// copy of x * w with its unscaled scale into xq (k n), and its sum of squares into sums[c / 32] (summed over the 8
// lanes by shuffles 4, 2, 1 apart: lk_gemv_fold and lk_gemv_fold_group end a group alike, the same numbers).
struct lk_fold_in {
  float4 v, w;  // the residual's 4 values and the norm's weights
};
LK_DEVICE lk_fold_in lk_fold_group_in(const lk_norm_tail& t, int c, bool ok) {
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  return {ok ? __ldcg(reinterpret_cast<const float4*>(t.x + c)) : zero,
          ok ? __ldg(reinterpret_cast<const float4*>(t.w + c)) : zero};
}
LK_DEVICE void lk_fold_group_end(const lk_norm_tail& t, lk_fold_in in, float4 a, int* __restrict__ xq,
                                 float* __restrict__ sums, int n, int c, bool ok) {
  float4 v = in.v;
  v.x += a.x, v.y += a.y, v.z += a.z, v.w += a.w;
  if (ok) *reinterpret_cast<float4*>(t.x + c) = v;
  float ss = v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
#pragma unroll
  for (int o = 4; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  float q[4] = {v.x * in.w.x, v.y * in.w.y, v.z * in.w.z, v.w * in.w.w};
  lk_quantize_piece(q, xq, n, c, ok);
  if (ok && (threadIdx.x & 7) == 0) sums[c / 32] = ss;
}

// A block of one 32-group of outputs (norm_fold_groups, glu_groups): its warp's RPW values v (lane 0's) stored to y
// from row0 and into the block's `group` (32 floats in shared memory), which its first warp ends after a barrier.
template <int RPW>
LK_DEVICE void lk_group_store(const lk_act (&v)[RPW], lk_act* __restrict__ y, int row0, float4 (&group)[8]) {
  if ((threadIdx.x & 31) != 0) return;
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    y[row0 + i] = v[i];
    reinterpret_cast<float*>(group)[threadIdx.x / 32 * RPW + i] = (float)v[i];
  }
}

// The decode step's projection whose output is the next norm's addend with that norm folded in (norm_fold): lk_gemv's
// rows (A as lk_gemv's), then each span of LK_NORM_SPAN outputs ended by the last of the blocks writing it, one warp
// (lk_fold_group_end a 32-group: the span added to the residual t.x, the int8 copy xq of x * w with unscaled scales --
// the norm's scale s factors out of a 32-block's codes; lk_xq_scale multiplies the projections' sums by it -- and each
// group's sum of squares into sums). The copy's k is n (d); n a multiple of LK_NORM_SPAN. t.out is not written.
template <class M, int RPW, class X = const lk_act*, int A = LK_GEMV_AHEAD>
__global__ void __launch_bounds__(256)
    lk_gemv_fold(M m, typename lk_in<X>::type x, const float* __restrict__ bias, lk_act* __restrict__ y, int k, int n,
                 lk_norm_tail t, int* __restrict__ xq, float* __restrict__ sums) {
  lk_gemv_rows<M, RPW, 1, X, A>(m, x, bias, y, k, n);
  lk_pdl_entry();  // (a warp without rows waits here, before the tail's writes)
  const int rows = (int)(blockDim.x >> 5) * RPW, r0 = (int)blockIdx.x * rows;
  const int s1 = (min(r0 + rows, n) - 1) / LK_NORM_SPAN;
  for (int s = r0 / LK_NORM_SPAN; s <= s1; ++s) {  // (uniform over the block)
    const int first = s * LK_NORM_SPAN / rows, last = (min((s + 1) * LK_NORM_SPAN, n) - 1) / rows;
    if (!lk_last_arrival(&lk_span_done[s], last - first + 1) || threadIdx.x >= 32) continue;
    const int c = s * LK_NORM_SPAN + 4 * (int)threadIdx.x;
    lk_fold_group_end(t, lk_fold_group_in(t, c, true), __ldcg(reinterpret_cast<const float4*>(y + c)), xq, sums, n, c,
                      true);
  }
}

// norm_fold_groups: lk_gemv_fold's projection in blocks of one 32-group of output rows (32 / RPW warps of RPW rows;
// RPW as lk_gemv's, gemv_short's included), each block ending its own group after a barrier: its rows kept in shared
// memory, its first warp adds them to the residual (read while the other warps finish), writes the group's copy and
// sum of squares (lk_fold_group_end: lk_gemv_fold's numbers) -- no counter, no fence, no second read of y from L2.
// n a multiple of 32.
template <class M, int RPW, class X = const lk_act*, int A = LK_GEMV_AHEAD>
__global__ void __launch_bounds__(32 / RPW * 32)
    lk_gemv_fold_group(M m, typename lk_in<X>::type x, const float* __restrict__ bias, lk_act* __restrict__ y, int k,
                       int n, lk_norm_tail t, int* __restrict__ xq, float* __restrict__ sums) {
  static_assert(RPW >= 1 && RPW <= 32 && 32 % RPW == 0, "a block's warps' rows are one 32-group");
  __shared__ float4 group[8];
  const int row0 = lk_gemv_row0<RPW>(), lane = threadIdx.x & 31, c = (int)blockIdx.x * 32 + 4 * lane;
  lk_acc acc[RPW][1];
  lk_gemv_sums<M, RPW, 1, 32, true, A>(m, x, k, n, row0, acc);
  lk_act v[RPW];
#pragma unroll
  for (int i = 0; i < RPW; ++i) v[i] = (lk_act)(acc[i][0] + (bias ? (lk_acc)bias[row0 + i] : (lk_acc)0));
  lk_group_store<RPW>(v, y, row0, group);
  lk_fold_in in{};
  if (threadIdx.x < 32) in = lk_fold_group_in(t, c, lane < 8);  // (in flight while the other warps finish)
  __syncthreads();
  if (threadIdx.x >= 32) return;
  lk_fold_group_end(t, in, lane < 8 ? group[lane] : make_float4(0.f, 0.f, 0.f, 0.f), xq, sums, n, c, lane < 8);
}

// The GEMV with each row's units split over S warps of a block (split-K), for short rows whose GEMV cannot fill the
// GPU with one warp a row: the warps' sums meet in shared memory, in a fixed order, and the group's first warp stores.
template <class M, int RPW, int R, int S, class X = const lk_act*>
__global__ void __launch_bounds__(256) lk_gemv_split(M m, typename lk_in<X>::type x, const float* __restrict__ bias,
                                                     lk_act* __restrict__ y, int k, int n) {
  __shared__ lk_acc part[8][RPW * R];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, groups = (blockDim.x >> 5) / S;
  const int row0 = (blockIdx.x * groups + warp / S) * RPW;
  const size_t slab = (size_t)blockIdx.y * R;
  lk_acc acc[RPW][R];
  lk_gemv_sums<M, RPW, R, 32 * S, true>(m, lk_x_at(x, slab, k), k, n, min(row0, n - 1), acc, lane + 32 * (warp % S));
  lk_pdl_entry();
  if (lane == 0)
#pragma unroll
    for (int i = 0; i < RPW; ++i)
#pragma unroll
      for (int r = 0; r < R; ++r) part[warp][i * R + r] = acc[i][r];
  __syncthreads();
  if (warp % S != 0 || row0 >= n) return;
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      lk_acc sum = 0;
      for (int w = warp; w < warp + S; ++w) sum += part[w][i * R + r];
      acc[i][r] = sum;
    }
  lk_gemv_store<RPW, R>(acc, bias, y + slab * n, n, row0);
}

// Up to three matrices one input feeds (q, k and v), side by side: part p has n[p] rows (a multiple of the warps'
// rows), its bias and its output.
template <class M>
struct lk_parts {
  M m[3];
  const float* bias[3];
  lk_act* y[3];
  int n[3];
};

// The projections of the parts in one launch, their rows in order: a warp's rows lie in one part.
template <class M, int RPW, int R, class X>
LK_DEVICE void lk_gemv_parts_rows(const lk_parts<M>& ps, typename lk_in<X>::type x, int k) {
  int row0 = lk_gemv_row0<RPW>();
  const int p = row0 < ps.n[0] ? 0 : row0 < ps.n[0] + ps.n[1] ? 1 : 2;
  row0 -= p == 0 ? 0 : p == 1 ? ps.n[0] : ps.n[0] + ps.n[1];
  const int n = p == 0 ? ps.n[0] : p == 1 ? ps.n[1] : ps.n[2];
  if (row0 >= n) return;
  const M m = p == 0 ? ps.m[0] : p == 1 ? ps.m[1] : ps.m[2];
  lk_acc acc[RPW][R];
  lk_gemv_sums<M, RPW, R, 32, true>(m, x, k, n, row0, acc);
  lk_gemv_store<RPW, R>(acc,
                        p == 0   ? ps.bias[0]
                        : p == 1 ? ps.bias[1]
                                 : ps.bias[2],
                        p == 0   ? ps.y[0]
                        : p == 1 ? ps.y[1]
                                 : ps.y[2],
                        n, row0);
}

template <class M, int RPW, int R, class X = const lk_act*>
__global__ void __launch_bounds__(256) lk_gemv_parts(lk_parts<M> ps, typename lk_in<X>::type x, int k) {
  lk_gemv_parts_rows<M, RPW, R, X>(ps, x, k);
}

// q and k in one format, v in another, in one launch (fuse_qkv; llama.cpp's Q4_K_M keeps some layers' v in Q6_K): a
// separate launch for v costs its boundary (~2.5-3 us a layer in session 28's timeline). The first (n[0] + n[1]) / RPW
// warps take q's and k's rows RPW at a time (their rows multiples of RPW), the rest v's RPWV at a time.
template <class M, class V>
struct lk_parts_mixed {
  M m[2];
  V v;
  const float* bias[3];
  lk_act* y[3];
  int n[3];
};

template <class M, class V, int RPW, int RPWV, int R, class X = const lk_act*>
__global__ void __launch_bounds__(256) lk_gemv_parts_mixed(lk_parts_mixed<M, V> ps, typename lk_in<X>::type x, int k) {
  const int w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), qk = (ps.n[0] + ps.n[1]) / RPW;
  if (w < qk) {
    const int p = w * RPW < ps.n[0] ? 0 : 1, row0 = w * RPW - (p ? ps.n[0] : 0);
    lk_acc acc[RPW][R];
    lk_gemv_sums<M, RPW, R, 32, true>(p ? ps.m[1] : ps.m[0], x, k, ps.n[p], row0, acc);
    lk_gemv_store<RPW, R>(acc, p ? ps.bias[1] : ps.bias[0], p ? ps.y[1] : ps.y[0], ps.n[p], row0);
    return;
  }
  const int row0 = (w - qk) * RPWV;
  if (row0 >= ps.n[2]) return;  // the whole warp
  lk_acc acc[RPWV][R];
  lk_gemv_sums<V, RPWV, R, 32, true>(ps.v, x, k, ps.n[2], row0, acc);
  lk_gemv_store<RPWV, R>(acc, ps.bias[2], ps.y[2], ps.n[2], row0);
}

// The q/k/v projection with rope and the cache append folded in (fuse_rope): its last block ropes the heads.
template <class M, int RPW, int R, bool NEOX, bool NORM, int PP, class X = const lk_act*>
__global__ void __launch_bounds__(256)
    lk_gemv_parts_rope(lk_parts<M> ps, typename lk_in<X>::type x, int k, lk_rope_args rope) {
  lk_gemv_parts_rows<M, RPW, R, X>(ps, x, k);
  lk_pdl_entry();
  lk_rope_after<NEOX, NORM, PP>(rope, R);
}

// The gated activation's parameters: biases of the gate and up rows (null for none: the dense FFN's), and gpt-oss's
// clamp (limit 0: plain SwiGLU).
struct lk_glu_act {
  const float* bg;
  const float* bu;
  float limit, alpha;
};

// The gated activation of one gate sum a and up sum b (each with its bias, rounded to lk_act first as the unfused
// launches store g and u), as lk_glu_sums below computes it.
LK_DEVICE lk_acc lk_glu(lk_acc a, lk_acc b, const lk_glu_act& act) {
  a = (lk_acc)(lk_act)a, b = (lk_acc)(lk_act)b;
  if (act.limit > 0.f) {
    const lk_acc limit = act.limit;
    a = min(a, limit);
    b = min(max(b, -limit), limit) + (lk_acc)1;
    return a / ((lk_acc)1 + exp(-(lk_acc)act.alpha * a)) * b;
  }
  return lk_gate(a) * b;
}

// The gated activation of a warp's reduced gate and up sums, into the gate's, for its RPW output rows from row0 (of n):
// each sum plus its row's bias, rounded to lk_act first as the unfused launches store g and u; then SwiGLU silu(g) *
// u, or with act.limit > 0 gpt-oss's clamped SwiGLU: g = min(g, limit), u = clamp(u, -limit, limit), g * sigmoid(alpha
// g) * (u + 1).
template <int RPW, int R>
LK_DEVICE void lk_glu_sums(lk_acc (&ag)[RPW][R], const lk_acc (&au)[RPW][R], int row0 = 0, int n = 1,
                           lk_glu_act act = {nullptr, nullptr, 0.f, 1.f}) {
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    const int row = min(row0 + i, n - 1);
    const lk_acc bg = act.bg ? (lk_acc)act.bg[row] : (lk_acc)0, bu = act.bu ? (lk_acc)act.bu[row] : (lk_acc)0;
#pragma unroll
    for (int r = 0; r < R; ++r) ag[i][r] = lk_glu(ag[i][r] + bg, au[i][r] + bu, act);
  }
}

// Whether lk_gemv_glu takes lk_gemv_sums_i8b2 (the decode step's int8 sums over a block format, a row a warp): its
// two rounds in flight hold 80 registers on Q4_K, so the launch asks for 3 blocks an SM (4 at 64 without it). Other
// instances ask for no minimum (0: as __launch_bounds__(256) alone; their registers as before).
template <class M, int RPW, int R>
constexpr bool lk_glu_joint = LK_WITH_BLOCKS && LK_INT8 > 0 && lk_blk_type<M>::value != 0 && RPW == 1 && R == 1;

// The gated feed-forward's first half in one launch: y = silu(G x) * (U x), a warp's RPW rows of both matrices.
// STAGE (glu_stage): the joint rounds stage the int8 copy's row in the block's shared memory (lk_gemv_glu_smem bytes).
template <class M, int RPW, int R, class X = const lk_act*, bool STAGE = false>
__global__ void __launch_bounds__(256, lk_glu_joint<M, RPW, R> ? 3 : 0)
    lk_gemv_glu(M g, M u, typename lk_in<X>::type x, lk_act* __restrict__ y, int k, int n) {
  const int row0 = lk_gemv_row0<RPW>();
  if (!STAGE && row0 >= n) return;  // (under STAGE every warp takes part in the staging)
  const size_t slab = (size_t)blockIdx.y * R;
  lk_acc ag[RPW][R], au[RPW][R];
#if LK_WITH_BLOCKS
  if constexpr (lk_glu_joint<M, RPW, R>) {
    lk_gemv_sums_i8b2<lk_blk_type<M>::value, RPW, R, X, STAGE>(g, u, lk_x_at(x, slab, k), k, n, min(row0, n - 1), ag,
                                                               au);
    if constexpr (std::is_same_v<X, lk_xq>) lk_xq_scale(x, k, ag, au);
    if (row0 >= n) return;  // (after the sums: under STAGE the block stages their input together)
  } else
#endif
  {
    if (row0 >= n) return;
    lk_gemv_sums<M, RPW, R, 32, true>(g, lk_x_at(x, slab, k), k, n, row0, ag);
    lk_gemv_sums<M, RPW, R>(u, lk_x_at(x, slab, k), k, n, row0, au);
  }
  lk_glu_sums(ag, au);
  lk_gemv_store<RPW, R>(ag, nullptr, y + slab * n, n, row0);
}

// glu_groups: the decode step's fused gate/up GEMV whose rows are one or two units a lane (A that many, RPW =
// LK_GEMV_AHEAD / A rows a warp: gemv_short's trade, the same registers as the joint rounds' one row of
// LK_GEMV_AHEAD), in blocks of one 32-group of outputs (32 / RPW warps), each writing its group's int8 copy yq (the
// down projection's input, k n) after a barrier as lk_quantize_i8 would: the quantize launch before the down folded
// in, with no counter or fence (session 21's count-and-fence a block lost; 23's cluster form too). The sums and the
// activation as lk_gemv_glu takes them: a block format's joint rounds (STAGE: glu_stage's copy in shared memory),
// Q8_0's gate then up.
template <class M, int RPW, int A, class X, bool STAGE = false>
__global__ void __launch_bounds__(32 / RPW * 32)
    lk_gemv_glu_group(M g, M u, typename lk_in<X>::type x, lk_act* __restrict__ y, int k, int n,
                      int* __restrict__ yq) {
  static_assert(RPW >= 1 && RPW <= 32 && 32 % RPW == 0 && A * RPW <= LK_GEMV_AHEAD, "a block's rows one 32-group");
  __shared__ float4 group[8];
  const int row0 = lk_gemv_row0<RPW>(), lane = threadIdx.x & 31;
  lk_acc ag[RPW][1], au[RPW][1];
#if LK_WITH_BLOCKS
  if constexpr (lk_blk_type<M>::value != 0) {
    lk_gemv_sums_i8b2<lk_blk_type<M>::value, RPW, 1, X, STAGE, A>(g, u, x, k, n, row0, ag, au);
    if constexpr (std::is_same_v<X, lk_xq>) lk_xq_scale(x, k, ag, au);
  } else
#endif
  {
    static_assert(!STAGE, "glu_stage stages a block format's copy");
    lk_gemv_sums<M, RPW, 1, 32, true, A>(g, x, k, n, row0, ag);
    lk_gemv_sums<M, RPW, 1, 32, false, A>(u, x, k, n, row0, au);
  }
  lk_glu_sums(ag, au);
  lk_act v[RPW];
#pragma unroll
  for (int i = 0; i < RPW; ++i) v[i] = (lk_act)ag[i][0];
  lk_group_store<RPW>(v, y, row0, group);
  __syncthreads();
  if (threadIdx.x >= 32) return;
  const float4 g4 = lane < 8 ? group[lane] : make_float4(0.f, 0.f, 0.f, 0.f);
  float q[4] = {g4.x, g4.y, g4.z, g4.w};
  lk_quantize_piece(q, yq, n, (int)blockIdx.x * 32 + 4 * lane, lane < 8);
}
