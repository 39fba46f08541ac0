// Attention over the key/value cache, for the decode step and causal prefill chunks alike.
//
// A block takes one key/value head, one row, one split of the row's positions, and G of the `group` query heads the
// key/value head serves (G = group: grouped-query attention reads each cached row once for the group; fewer: more
// blocks, each reading the head's rows). Row r of a step sits at
// position *pos + r and attends to positions [0, *pos + r]: the causal mask of a chunk is the row's length; on a
// sliding layer (window > 0) to its last `window` of them only (lk_window_first), the splits spread over those. With
// `sinks` (gpt-oss: a logit per query head, null for none) each head's sink joins the softmax's denominator, once,
// where the row's output is normalized: the block's merge with one split, else the fold (lk_attention_out). In
// lk_attention a warp walks every fourth position with an online softmax, its lanes over the head's width; in
// lk_attention_lanes (attn_lanes) a warp takes 32 positions at once, a lane a position for the scores and a lane a
// dimension for the values. Either way the block's warps merge in shared memory (lk_attention_merge). With one split
// the block writes the output; with more, each writes its partial (max, sum, weighted values) and lk_attention_fold
// merges. The caches are lk_kv (kernels/kv.cuh). With LK_ATTN_SOFTCAP (gemma2) each score is softcapped before the
// softmax sees it (lk_softcap).

// A query head's output value from its softmax's max m, sum l and weighted value v: v / l, or with `sinks` its head's
// sink logit s joining the sum, v e^(m - t) / (l e^(m - t) + e^(s - t)) with t the larger of m and s.
LK_DEVICE lk_acc lk_attention_out(lk_acc m, lk_acc l, lk_acc v, const float* __restrict__ sinks, int head) {
  if (!sinks) return v / l;
  const lk_acc s = (lk_acc)sinks[head], top = max(m, s), f = exp(m - top);
  return v * f / (l * f + exp(s - top));
}

// With one split (no fold after) and gemv_prequant's copy `xq` (the decode step's one row), the block's query heads'
// values [c0, c0 + len) of the row (k wide; whole 32-blocks) into the copy, as the fold would write them (every
// thread calls it).
LK_DEVICE void lk_attention_quantize(const lk_act* out, int* __restrict__ xq, int k, int c0, int len, int splits) {
  if (!xq || splits != 1) return;
  __syncthreads();  // (the heads' values, written by the block's threads)
  lk_quantize_cols(out, xq, k, c0, len);
}

// The block's warps' partials merged: each warp's running max m, sum l and weighted values acc of its G heads, into
// the output (one split) or the split's partial. `sm` is lk_attention_smem(sizeof(lk_acc), G, VPER) bytes.
template <int G, int VPER>
LK_DEVICE void lk_attention_merge(const lk_acc (&m)[G], const lk_acc (&l)[G], const lk_acc (&acc)[G][VPER], lk_acc* sm,
                                  lk_act* __restrict__ out, lk_acc* __restrict__ part, const float* __restrict__ sinks,
                                  int head0, int r, int s, int hq, int vd, int splits) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  lk_acc* sl = sm + LK_ATTN_WARPS * G;
  lk_acc* sa = sl + LK_ATTN_WARPS * G;
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (lane == 0) {
      sm[warp * G + g] = m[g];
      sl[warp * G + g] = l[g];
    }
#pragma unroll
    for (int p = 0; p < VPER; ++p) sa[(warp * G + g) * 32 * VPER + lane + 32 * p] = acc[g][p];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * vd; i += blockDim.x) {
    const int g = i / vd, d = i % vd;
    lk_acc mx = -INFINITY;
    for (int w = 0; w < LK_ATTN_WARPS; ++w) mx = max(mx, sm[w * G + g]);
    lk_acc sum = 0, val = 0;
    if (mx != -INFINITY)
      for (int w = 0; w < LK_ATTN_WARPS; ++w) {
        const lk_acc f = exp(sm[w * G + g] - mx);
        sum += sl[w * G + g] * f;
        val += sa[(w * G + g) * 32 * VPER + d] * f;
      }
    const int head = head0 + g;
    if (splits == 1) {
      out[((size_t)r * hq + head) * vd + d] = (lk_act)lk_attention_out(mx, sum, val, sinks, head);
    } else {
      lk_acc* pp = part + (((size_t)r * hq + head) * splits + s) * (vd + 2);
      if (d == 0) {
        pp[0] = mx;
        pp[1] = sum;
      }
      pp[2 + d] = val;
    }
  }
}

template <int G, int PER, int VPER>
__global__ void __launch_bounds__(LK_ATTN_WARPS * 32)
    lk_attention(const lk_act* __restrict__ q, const lk_kv* __restrict__ kc, const lk_kv* __restrict__ vc,
                 const int* __restrict__ pos, lk_act* __restrict__ out, lk_acc* __restrict__ part,
                 const float* __restrict__ sinks, int window, int hq, int hd, int vd, int ctx, double scale, int splits,
                 int group, int* __restrict__ xq) {
  lk_pdl_entry();
  if (LK_ABLATE & 1) return;
  extern __shared__ unsigned char lk_smem[];
  const int s = blockIdx.y, r = blockIdx.z, kvh = blockIdx.x / (group / G);
  const int head0 = kvh * group + blockIdx.x % (group / G) * G;  // the block's first query head
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int len = *pos + r + 1, first = lk_window_first(len, window), chunk = (len - first + splits - 1) / splits;
  const int t0 = first + s * chunk, t1 = min(len, t0 + chunk);
  lk_acc qv[G][PER];
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int p = 0; p < PER; ++p) {
      const int d = lane + 32 * p;
      qv[g][p] = d < hd ? (lk_acc)q[((size_t)r * hq + head0 + g) * hd + d] * (lk_acc)scale : (lk_acc)0;
    }
  lk_acc m[G], l[G], acc[G][VPER];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0;
#pragma unroll
    for (int p = 0; p < VPER; ++p) acc[g][p] = 0;
  }
  const size_t kvals = (size_t)(hq / group) * ctx * hd, vvals = (size_t)(hq / group) * ctx * vd;
  const size_t kbase = (size_t)kvh * ctx * hd, vbase = (size_t)kvh * ctx * vd;
  // (two positions a warp unrolled: the second's loads issued before the first's products, the same sums in the same
  // order; one at a time, each position's cache rows were a dependent round trip: session 43, heads 256 wide)
#pragma unroll 2
  for (int t = t0 + warp; t < t1; t += LK_ATTN_WARPS) {
    lk_acc kv[PER], vv[VPER];
#pragma unroll
    for (int p = 0; p < PER; ++p)
      kv[p] = lane + 32 * p < hd ? lk_kv_get(kc, kvals, kbase + (size_t)t * hd + lane + 32 * p) : (lk_acc)0;
#pragma unroll
    for (int p = 0; p < VPER; ++p)
      vv[p] = lane + 32 * p < vd ? lk_kv_get(vc, vvals, vbase + (size_t)t * vd + lane + 32 * p) : (lk_acc)0;
#pragma unroll
    for (int g = 0; g < G; ++g) {
      lk_acc sc = 0;
#pragma unroll
      for (int p = 0; p < PER; ++p) sc += qv[g][p] * kv[p];
      sc = lk_warp_sum(sc);
      if constexpr (LK_ATTN_SOFTCAP != 0) sc = lk_softcap(sc, LK_ATTN_SOFTCAP);
      const lk_acc mn = max(m[g], sc), corr = exp(m[g] - mn), e = exp(sc - mn);
      l[g] = l[g] * corr + e;
#pragma unroll
      for (int p = 0; p < VPER; ++p) acc[g][p] = acc[g][p] * corr + e * vv[p];
      m[g] = mn;
    }
  }
  lk_attention_merge<G, VPER>(m, l, acc, reinterpret_cast<lk_acc*>(lk_smem), out, part, sinks, head0, r, s, hq, vd,
                              splits);
  lk_attention_quantize(out, xq, hq * vd, head0 * vd, G * vd, splits);
}

// A lane a position: each warp scores 32 positions at once (a lane its position's key against the G queries staged in
// shared memory, 8 cached values a load), folds them into its online softmax with one max and one sum a head, then
// sums the 32 positions' values a lane a dimension (each position's weight handed round by a shuffle). Widths are
// multiples of 8 (the lowering picks lk_attention otherwise).
template <int G, int VPER>
__global__ void __launch_bounds__(LK_ATTN_WARPS * 32)
    lk_attention_lanes(const lk_act* __restrict__ q, const lk_kv* __restrict__ kc, const lk_kv* __restrict__ vc,
                       const int* __restrict__ pos, lk_act* __restrict__ out, lk_acc* __restrict__ part,
                       const float* __restrict__ sinks, int window, int hq, int hd, int vd, int ctx, double scale,
                       int splits, int group, int* __restrict__ xq) {
  lk_pdl_entry();
  if (LK_ABLATE & 1) return;
  extern __shared__ unsigned char lk_smem[];
  const int s = blockIdx.y, r = blockIdx.z, kvh = blockIdx.x / (group / G);
  const int head0 = kvh * group + blockIdx.x % (group / G) * G;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int len = *pos + r + 1, first = lk_window_first(len, window), chunk = (len - first + splits - 1) / splits;
  const int t0 = first + s * chunk, t1 = min(len, t0 + chunk);
  lk_acc* merge = reinterpret_cast<lk_acc*>(lk_smem);
  lk_acc* qs = merge + lk_attention_smem(1, G, VPER);  // [G][hd], scaled (after the merge's partials)
  for (int i = threadIdx.x; i < G * hd; i += blockDim.x)
    qs[i] = (lk_acc)q[((size_t)r * hq + head0 + i / hd) * hd + i % hd] * (lk_acc)scale;
  __syncthreads();
  lk_acc m[G], l[G], acc[G][VPER];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0;
#pragma unroll
    for (int p = 0; p < VPER; ++p) acc[g][p] = 0;
  }
  const size_t kvals = (size_t)(hq / group) * ctx * hd, vvals = (size_t)(hq / group) * ctx * vd;
  const size_t krow = (size_t)kvh * ctx, vbase = (size_t)kvh * ctx * vd;
  for (int tile = t0 + warp * 32; tile < t1; tile += LK_ATTN_WARPS * 32) {
    const int t = tile + lane;
    const bool live = t < t1;
    lk_acc sc[G];
#pragma unroll
    for (int g = 0; g < G; ++g) sc[g] = 0;
    if (live)
#pragma unroll 4  // (four 8-value loads in flight, the products in the same order)
      for (int d = 0; d < hd; d += 8) {
        lk_acc k8[8];
        lk_kv_get8(kc, kvals, (krow + t) * hd + d, k8);
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int e = 0; e < 8; ++e) sc[g] += qs[g * hd + d + e] * k8[e];
      }
    if constexpr (LK_ATTN_SOFTCAP != 0)
#pragma unroll
      for (int g = 0; g < G; ++g) sc[g] = lk_softcap(sc[g], LK_ATTN_SOFTCAP);
    lk_acc w[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const lk_acc mn = max(m[g], lk_warp_max(live ? sc[g] : (lk_acc)-INFINITY));  // (lane 0's position is live)
      const lk_acc corr = exp(m[g] - mn);
      w[g] = live ? exp(sc[g] - mn) : (lk_acc)0;
      l[g] = l[g] * corr + lk_warp_sum(w[g]);
#pragma unroll
      for (int p = 0; p < VPER; ++p) acc[g][p] *= corr;
      m[g] = mn;
    }
    const int n = min(32, t1 - tile);
#pragma unroll 4  // (four positions' values in flight, as the keys above)
    for (int j = 0; j < n; ++j) {
      lk_acc vv[VPER];
#pragma unroll
      for (int p = 0; p < VPER; ++p)
        vv[p] = lane + 32 * p < vd ? lk_kv_get(vc, vvals, vbase + (size_t)(tile + j) * vd + lane + 32 * p) : (lk_acc)0;
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const lk_acc wj = __shfl_sync(0xffffffffu, w[g], j);
#pragma unroll
        for (int p = 0; p < VPER; ++p) acc[g][p] += wj * vv[p];
      }
    }
  }
  lk_attention_merge<G, VPER>(m, l, acc, merge, out, part, sinks, head0, r, s, hq, vd, splits);
  lk_attention_quantize(out, xq, hq * vd, head0 * vd, G * vd, splits);
}

// The dynamic shared memory lk_attention<G, PER, VPER> takes is lk_attention_smem(sizeof(lk_acc), G, VPER), and
// lk_attention_lanes<G, VPER>'s lk_attention_lanes_smem(sizeof(lk_acc), G, VPER, hd) (kernels/shapes.cuh), which the
// compiler's lowering launches them with.

// The first `splits` partials (`stride` a pair) of `heads` (row, query head) pairs from rh0 (query heads from head0)
// merged into the output by one block, the sinks joining the sums: every pair's maxima and sums first; each pair's max,
// its splits' weights e^(m - max) and its sum in split order into `sm` (shared memory, 2 heads splits + 2 heads
// values), a warp a pair (its lanes the splits' weights at once, where one thread walked them, a load and an
// exponential each in series: with the shared-memory copy below and lk_last_arrival's one count, the step's own fold at
// depth 32k / 32 splits 48.0 -> 46.5 us on the H200, session 50); then each value's splits summed in order, two values
// a thread with B splits' loads of both in flight at once (one value's 8 at a time were 8 L2 round trips in series at
// 32 splits: the step attention's own fold at depth 32k 49.9 -> 47.5 us, session 30; asking the first 32 before the
// maxima, in one L2 round trip, spilled in the step attention and measured no better: session 31). Read past L1:
// lk_attention_mma's own fold reads what other blocks of its launch wrote.
// With `groups` above 1 (lk_attention_fold's wide blocks: blockDim a multiple of groups, n at most blockDim / groups)
// group g of the threads sums splits [g splits / groups, (g + 1) splits / groups) of each value, into `sm` past the
// sums, and the groups' sums are added in order: each value's loads of a round in flight in every group at once.
// `copy` (shared memory, heads vd values; null for none) receives the outputs too, value i of pair h at h vd + i, for
// the block's quantize of them (groups 1).
LK_DEVICE void lk_fold_splits(const lk_acc* part, lk_act* __restrict__ out, const float* __restrict__ sinks, size_t rh0,
                              int head0, int heads, int vd, int stride, int splits, lk_acc* sm, int groups = 1,
                              lk_act* copy = nullptr) {
  constexpr int B = 16;                  // a value's splits in flight at once
  lk_acc* const f = sm;                  // [heads][splits]: m, then the weight
  lk_acc* const l = f + heads * splits;  // [heads][splits]
  lk_acc *const top = l + heads * splits, *const sum = top + heads;
  const int n = heads * vd, step = (int)blockDim.x;
  lk_acc a[B], b[B];  // (values i0 and i0 + step, splits s0 ..)
  auto ask = [&](int i0, int s0) {
    const int i1 = i0 + step, c1 = min(i1, n - 1);
    const lk_acc* p0 = part + (rh0 + i0 / vd) * stride * (vd + 2) + 2 + i0 % vd;
    const lk_acc* p1 = part + (rh0 + c1 / vd) * stride * (vd + 2) + 2 + c1 % vd;
#pragma unroll
    for (int j = 0; j < B; ++j) {
      const bool ok = s0 + j < splits;
      a[j] = ok ? __ldcg(p0 + (size_t)(s0 + j) * (vd + 2)) : (lk_acc)0;
      b[j] = ok && i1 < n ? __ldcg(p1 + (size_t)(s0 + j) * (vd + 2)) : (lk_acc)0;
    }
  };
  for (int i = threadIdx.x; i < heads * splits; i += blockDim.x) {
    const lk_acc* pp = part + ((rh0 + i / splits) * stride + i % splits) * (vd + 2);
    f[i] = __ldcg(pp);
    l[i] = __ldcg(pp + 1);
  }
  __syncthreads();
  // (the max in any order is the same; a split that saw no position (m -inf) has weight 0 and sum +0, so its term
  // l w = +0 leaves the sum as it is: the sums in split order are the numbers one thread's loop over them gave)
  const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
  for (int h = warp; h < heads; h += (int)blockDim.x >> 5) {
    lk_acc* const fh = f + h * splits;
    lk_acc mx = -INFINITY;
    for (int s = lane; s < splits; s += 32) mx = max(mx, fh[s]);
    mx = lk_warp_max(mx);
    for (int s = lane; s < splits; s += 32) fh[s] = fh[s] == -INFINITY ? (lk_acc)0 : exp(fh[s] - mx);
    __syncwarp();
    if (lane == 0) {
      const lk_acc* const lh = l + h * splits;
      lk_acc total = 0;
      for (int s = 0; s < splits; ++s) total += lh[s] * fh[s];
      top[h] = mx;
      sum[h] = total;
    }
  }
  __syncthreads();
  if (groups > 1) {
    const int width = step / groups, g = (int)threadIdx.x / width, lo = g * splits / groups,
              hi = (g + 1) * splits / groups;
    lk_acc* const gs = sum + heads;  // [groups][n]
    for (int i0 = (int)threadIdx.x % width; i0 < n; i0 += width) {
      const lk_acc* p0 = part + (rh0 + i0 / vd) * stride * (vd + 2) + 2 + i0 % vd;
      const int h0 = i0 / vd;
      lk_acc v = 0;
      for (int s0 = lo; s0 < hi; s0 += B) {
#pragma unroll
        for (int j = 0; j < B; ++j) a[j] = s0 + j < hi ? __ldcg(p0 + (size_t)(s0 + j) * (vd + 2)) : (lk_acc)0;
#pragma unroll
        for (int j = 0; j < B; ++j)
          if (s0 + j < hi) v += a[j] * f[h0 * splits + s0 + j];
      }
      gs[g * n + i0] = v;
    }
    __syncthreads();
    for (int i0 = threadIdx.x; i0 < n; i0 += step) {
      const int h0 = i0 / vd;
      lk_acc v = 0;
      for (int j = 0; j < groups; ++j) v += gs[j * n + i0];
      out[(rh0 + h0) * vd + i0 % vd] = (lk_act)lk_attention_out(top[h0], sum[h0], v, sinks, head0 + h0);
    }
    return;
  }
  for (int i0 = threadIdx.x; i0 < n; i0 += 2 * step) {
    const int i1 = i0 + step;
    const int h0 = i0 / vd, h1 = min(i1, n - 1) / vd;
    lk_acc v0 = 0, v1 = 0;
    for (int s0 = 0; s0 < splits; s0 += B) {
      ask(i0, s0);
#pragma unroll
      for (int j = 0; j < B; ++j)
        if (s0 + j < splits) {
          v0 += a[j] * f[h0 * splits + s0 + j];
          v1 += b[j] * f[h1 * splits + s0 + j];
        }
    }
    const lk_act o0 = (lk_act)lk_attention_out(top[h0], sum[h0], v0, sinks, head0 + h0);
    out[(rh0 + h0) * vd + i0 % vd] = o0;
    if (copy) copy[i0] = o0;
    if (i1 < n) {
      const lk_act o1 = (lk_act)lk_attention_out(top[h1], sum[h1], v1, sinks, head0 + h1);
      out[(rh0 + h1) * vd + i1 % vd] = o1;
      if (copy) copy[i1] = o1;
    }
  }
}

// Merges the splits' partials of each (row, query head), its sink joining the sum: a block a pair, a thread a value (of
// lk_fold_groups' groups, each a share of the splits: lk_fold_threads).
// Under QUANT (gemv_prequant; the decode step's one row, vd whole 32-blocks) the block also writes its head's part of
// the row's quantized copy xq, which the output projection reads: the quantize launch folded in.
template <bool QUANT>
__global__ void lk_attention_fold(const lk_acc* __restrict__ part, lk_act* __restrict__ out,
                                  const float* __restrict__ sinks, int hq, int vd, int splits, int* __restrict__ xq) {
  lk_pdl_entry();
  if (LK_ABLATE & 1) return;
  // (splits: at most the attn_splits knob's largest, 64; then the groups' sums, lk_fold_threads)
  __shared__ lk_acc sm[2 * 64 + 2 + 4 * 256];
  const int h = blockIdx.x, r = blockIdx.y;
  lk_fold_splits(part, out, sinks, (size_t)r * hq + h, h, 1, vd, splits, splits, sm, lk_fold_groups(vd, splits));
  if constexpr (QUANT) {
    __syncthreads();  // (the head's values, written by the block's threads)
    lk_quantize_cols(out, xq, hq * vd, h * vd, vd);
  }
}
