// The mixture of experts: each row's route (top-k of the router's logits, softmax, renormalization), the selected
// experts' projections read from their rows of the 3-D expert tensors (the ids stay on the device: no host round trip,
// a CUDA graph captures them), and the weighted combine in each route's order.

// The route of one row by one warp (a block a row): from its router logits (`experts` of them) the k experts it runs,
// largest first and the lowest expert first among equals, into ids[row][k], their weights into weights[row][k]. Under
// SOFTMAX_FIRST (qwen2moe, qwen3moe) a softmax over every expert and the k largest probabilities kept; else (gpt-oss)
// the k largest logits kept and a softmax over them. NORM divides the weights by their sum (at least the smallest
// normal f16, llama.cpp's clamp). With `shared_w` the row's shared-expert gate sigmoid(shared_w . x[row]) into
// gate[row]. Dynamic shared memory: `experts` lk_act.
template <bool SOFTMAX_FIRST, bool NORM>
__global__ void __launch_bounds__(32)
    lk_moe_route(const lk_act* __restrict__ logits, int experts, int k, const float* __restrict__ shared_w,
                 const lk_act* __restrict__ x, int d, int* __restrict__ ids, lk_act* __restrict__ weights,
                 lk_act* __restrict__ gate) {
  lk_pdl_entry();
  extern __shared__ unsigned char lk_moe_smem[];
  lk_act* score = reinterpret_cast<lk_act*>(lk_moe_smem);
  const int row = blockIdx.x, lane = threadIdx.x;
  const lk_act* l = logits + (size_t)row * experts;
  lk_acc top = -INFINITY;
  for (int e = lane; e < experts; e += 32) top = max(top, (lk_acc)l[e]);
  top = lk_warp_max(top);
  lk_acc sum = 0;
  for (int e = lane; e < experts; e += 32) {
    const lk_acc p = SOFTMAX_FIRST ? exp((lk_acc)l[e] - top) : (lk_acc)l[e];
    score[e] = (lk_act)p;
    sum += p;
  }
  sum = lk_warp_sum(sum);
  if (SOFTMAX_FIRST)
    for (int e = lane; e < experts; e += 32) score[e] = (lk_act)((lk_acc)score[e] / sum);
  __syncwarp();
  // k rounds of the warp's arg-max (lowest index on ties), each pick taken out of the scores.
  lk_act picked = 0;  // lane s < k: pick s's score
  int pick = 0;
  for (int s = 0; s < k; ++s) {
    lk_act best = (lk_act)-INFINITY;
    int bi = experts;
    for (int e = lane; e < experts; e += 32)
      if (score[e] > best) best = score[e], bi = e;
    lk_warp_argmax(best, bi);
    if (lane == s) picked = best, pick = bi;
    __syncwarp();
    if (lane == 0) score[bi] = (lk_act)-INFINITY;
    __syncwarp();
  }
  lk_acc w = lane < k ? (lk_acc)picked : (lk_acc)0;
  if (!SOFTMAX_FIRST) {  // the softmax over the k kept logits (the first pick is the largest)
    const lk_acc first = __shfl_sync(0xffffffffu, (lk_acc)picked, 0);
    w = lane < k ? exp(w - first) : (lk_acc)0;
    w /= lk_warp_sum(w);
  }
  if (NORM) w /= max(lk_warp_sum(w), (lk_acc)6.103515625e-5);
  if (lane < k) {
    ids[(size_t)row * k + lane] = pick;
    weights[(size_t)row * k + lane] = (lk_act)w;
  }
  if (shared_w) {
    lk_acc dot = 0;
    for (int i = lane; i < d; i += 32) dot += (lk_acc)shared_w[i] * (lk_acc)x[(size_t)row * d + i];
    dot = lk_warp_sum(dot);
    if (lane == 0) gate[row] = (lk_act)((lk_acc)1 / ((lk_acc)1 + exp(-dot)));
  }
}

// An exclusive prefix sum of v[0 .. n) in shared memory, in place, by the whole block (a multiple of 32 threads, all
// calling), its total into v[n]: tiles of a thread an element, each warp's by shuffles, then the warps' totals.
LK_DEVICE void lk_block_scan(int* v, int n) {
  __shared__ int warp_sums[32];
  __shared__ int carry;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (int base = 0; base < n; base += blockDim.x) {
    const int i = base + threadIdx.x, x = i < n ? v[i] : 0;
    int incl = x;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int y = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl += y;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
      int w = lane < warps ? warp_sums[lane] : 0;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, w, o);
        if (lane >= o) w += y;
      }
      if (lane < warps) warp_sums[lane] = w;
    }
    __syncthreads();
    const int before = carry + (warp ? warp_sums[warp - 1] : 0);
    if (i < n) v[i] = before + incl - x;
    __syncthreads();  // (every thread has read carry)
    if (threadIdx.x == blockDim.x - 1) carry = before + incl;
    __syncthreads();
  }
  if (threadIdx.x == 0) v[n] = carry;
  __syncthreads();
}

// A chunk's (row, slot) pairs grouped by expert, by one block: each expert's count of pairs and the first of its
// positions (the experts in order), the pair (row * used + slot) at each position, its pairs in ascending order, and
// each pair's position (`at`). Deterministic: the pairs walked in tiles of a thread a pair; in a warp the pairs of one
// expert find each other (__match_any_sync: a pair's rank among them is the lanes below it), the warps' counts of
// each expert go into a table, and a thread an expert turns its column into each warp's first rank, past the earlier
// tiles' pairs of that expert; `at` holds the rank within the expert until a prefix sum over the experts' counts
// gives their first positions. Dynamic shared memory: the table, then the experts' counts (lk_moe_group_smem).
__global__ void __launch_bounds__(LK_MOE_GROUP_THREADS)
    lk_moe_group(const int* __restrict__ ids, int pairs, int experts, int* __restrict__ count, int* __restrict__ first,
                 int* __restrict__ order, int* __restrict__ at) {
  lk_pdl_entry();
  extern __shared__ int lk_moe_table[];  // [warps][experts]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int* seen = lk_moe_table + warps * experts;  // [experts + 1]: each expert's pairs so far, then its first position
  for (int e = threadIdx.x; e < experts; e += blockDim.x) seen[e] = 0;
  for (int tile = 0; tile < pairs; tile += blockDim.x) {
    for (int c = threadIdx.x; c < warps * experts; c += blockDim.x) lk_moe_table[c] = 0;
    __syncthreads();
    const int i = tile + threadIdx.x, e = i < pairs ? ids[i] : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, e);
    const int rank = __popc(peers & ((1u << lane) - 1u));
    if (e >= 0 && rank == 0) lk_moe_table[warp * experts + e] = __popc(peers);
    __syncthreads();
    for (int x = threadIdx.x; x < experts; x += blockDim.x) {
      int n = seen[x];
      for (int w = 0; w < warps; ++w) {
        const int c = lk_moe_table[w * experts + x];
        lk_moe_table[w * experts + x] = n;
        n += c;
      }
      seen[x] = n;
    }
    __syncthreads();
    if (e >= 0) at[i] = lk_moe_table[warp * experts + e] + rank;
    __syncthreads();  // (the table is cleared for the next tile)
  }
  lk_block_scan(seen, experts);
  for (int e = threadIdx.x; e < experts; e += blockDim.x) {
    first[e] = seen[e];
    count[e] = seen[e + 1] - seen[e];
  }
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {  // (each thread its own pairs of the tiles above)
    const int pos = seen[ids[i]] + at[i];
    at[i] = pos;
    order[pos] = i;
  }
}

// The activation rows in grouped order, a block a position: xg[pos] = x[order[pos] / used], d wide.
__global__ void __launch_bounds__(256) lk_moe_gather(const lk_act* __restrict__ x, const int* __restrict__ order,
                                                     int used, lk_act* __restrict__ xg, int d) {
  lk_pdl_entry();
  const size_t pos = blockIdx.x, row = order[pos] / used;
  for (int i = threadIdx.x; i < d; i += blockDim.x) xg[pos * d + i] = x[row * d + i];
}

// One expert's grouped rows through a GEMV body `slab` (a functor templated on its rows R): slabs of 8, then 4, 2 and
// 1 rows for the rest, each row's sums its own (so the same numbers as the decode step's one row).
template <class Slab>
LK_DEVICE void lk_moe_slabs(int rows, Slab slab) {
  int j = 0;
  for (; j + 8 <= rows; j += 8) slab.template run<8>(j);
  if (j + 4 <= rows) slab.template run<4>(j), j += 4;
  if (j + 2 <= rows) slab.template run<2>(j), j += 2;
  if (j < rows) slab.template run<1>(j);
}

// An expert's paired gate and up projections over R activation rows (x, k wide: activations, or gemv_prequant's
// int8 copy), a warp's RPW rows of the expert's n (rows base ... base + n - 1 of the 3-D tensors, whose other experts
// are not read): out = silu(G x) * (U x).
template <class MG, class MU, int RPW, class X = const lk_act*>
struct lk_moe_glu_rows {
  const MG& g;
  const MU& u;
  X x;
  lk_act* out;
  int k, n, base, row0;
  lk_glu_act act;  // the biases of every expert ([experts][n]), the clamp
  template <int R>
  LK_DEVICE void run(int j) const {  // from activation row j
    lk_acc ag[RPW][R], au[RPW][R];
    lk_gemv_sums<MG, RPW, R>(g, lk_x_at(x, j, k), k, base + n, base + row0, ag);
    lk_gemv_sums<MU, RPW, R>(u, lk_x_at(x, j, k), k, base + n, base + row0, au);
    lk_glu_act mine = act;  // (the expert's biases)
    if (mine.bg) mine.bg += base;
    if (mine.bu) mine.bu += base;
    lk_glu_sums(ag, au, row0, n, mine);
    lk_gemv_store<RPW, R>(ag, nullptr, out + (size_t)j * n, n, row0);
  }
};
// An expert's down projection over R activation rows, as lk_moe_glu_rows: out = D x (+ the expert's row of `bias`,
// [experts][n], where not null).
template <class M, int RPW, class X = const lk_act*>
struct lk_moe_down_rows {
  const M& w;
  X x;
  lk_act* out;
  int k, n, base, row0;
  const float* bias;
  template <int R>
  LK_DEVICE void run(int j) const {
    lk_acc acc[RPW][R];
    lk_gemv_sums<M, RPW, R>(w, lk_x_at(x, j, k), k, base + n, base + row0, acc);
    lk_gemv_store<RPW, R>(acc, bias ? bias + base : nullptr, out + (size_t)j * n, n, row0);
  }
};

// The decode step's expert projections, a (slot, row) pair a block column (blockIdx.y, blockIdx.z): expert e =
// ids[row][slot]'s rows times x[row] (glu: gate and up paired, out[row][slot] = silu(G_e x) * (U_e x); down: act[row]
// [slot] in, D_e act out). Each pair is one activation row's GEMV. Under gemv_prequant (X lk_xq) the inputs are int8
// copies: x's row (glu), the pairs' rows of act (down).
template <class MG, class MU, int RPW, class X = const lk_act*>
__global__ void __launch_bounds__(256) lk_moe_glu(MG g, MU u, typename lk_in<X>::type x, const int* __restrict__ ids,
                                                  lk_act* __restrict__ out, int k, int n, int used, lk_glu_act act) {
  lk_pdl_entry();
  const int row0 = lk_gemv_row0<RPW>(), pair = blockIdx.z * used + blockIdx.y;
  if (row0 >= n) return;  // the whole warp
  const lk_moe_glu_rows<MG, MU, RPW, X> rows{g, u, lk_x_at(x, blockIdx.z, k), out + (size_t)pair * n, k, n,
                                             ids[pair] * n, row0, act};
  rows.template run<1>(0);
}
template <class M, int RPW, class X = const lk_act*>
__global__ void __launch_bounds__(256)
    lk_moe_down(M w, typename lk_in<X>::type act, const int* __restrict__ ids, lk_act* __restrict__ out, int k, int n,
                int used, const float* __restrict__ bias) {
  lk_pdl_entry();
  const int row0 = lk_gemv_row0<RPW>(), pair = blockIdx.z * used + blockIdx.y;
  if (row0 >= n) return;
  lk_moe_down_rows<M, RPW, X>{w, lk_x_at(act, pair, k), out + (size_t)pair * n, k, n, ids[pair] * n, row0, bias}
      .template run<1>(0);
}

// A chunk's expert projections over its pairs grouped by expert (lk_moe_group, lk_moe_gather): a block column an
// expert e (blockIdx.y) whose rows are read once a slab of its pairs (count[e] of them from position first[e]; x and
// out in grouped order).
template <class MG, class MU, int RPW>
__global__ void __launch_bounds__(256)
    lk_moe_glu_grouped(MG g, MU u, const lk_act* __restrict__ xg, const int* __restrict__ count,
                       const int* __restrict__ first, lk_act* __restrict__ out, int k, int n, lk_glu_act act) {
  lk_pdl_entry();
  const int row0 = lk_gemv_row0<RPW>(), e = blockIdx.y;
  if (row0 >= n) return;
  const size_t at = (size_t)first[e];
  lk_moe_slabs(count[e], lk_moe_glu_rows<MG, MU, RPW>{g, u, xg + at * k, out + at * n, k, n, e * n, row0, act});
}
template <class M, int RPW>
__global__ void __launch_bounds__(256)
    lk_moe_down_grouped(M w, const lk_act* __restrict__ act, const int* __restrict__ count,
                        const int* __restrict__ first, lk_act* __restrict__ out, int k, int n,
                        const float* __restrict__ bias) {
  lk_pdl_entry();
  const int row0 = lk_gemv_row0<RPW>(), e = blockIdx.y;
  if (row0 >= n) return;
  const size_t at = (size_t)first[e];
  lk_moe_slabs(count[e], lk_moe_down_rows<M, RPW>{w, act + at * k, out + at * n, k, n, e * n, row0, bias});
}

// The combine, a block a row: y[row] = sum over the slots, in the route's order, of weights[row][slot] *
// expert_out[row][slot] (at position at[row][slot] where a chunk's pairs were grouped by expert; then + gate[row] *
// shared[row] where a shared expert ran), d wide. Under NORM (fuse_norm) the block then adds y to the residual and
// norms it for the next layer (lk_add_rmsnorm_row), as the norm launch would.
template <bool NORM>
__global__ void __launch_bounds__(1024)
    lk_moe_combine(const lk_act* __restrict__ expert_out, const int* __restrict__ at,
                   const lk_act* __restrict__ weights, int used, const lk_act* __restrict__ shared,
                   const lk_act* __restrict__ gate, lk_act* __restrict__ y, int d, lk_norm_tail tail) {
  lk_pdl_entry();
  const int row = blockIdx.x;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    lk_acc v = 0;
    for (int s = 0; s < used; ++s) {
      const int pair = row * used + s;
      v += (lk_acc)weights[pair] * (lk_acc)expert_out[(size_t)(at ? at[pair] : pair) * d + i];
    }
    if (shared) v += (lk_acc)gate[row] * (lk_acc)shared[(size_t)row * d + i];
    y[(size_t)row * d + i] = (lk_act)v;
  }
  if (!NORM) return;
  __syncthreads();  // (each thread adds the elements it wrote itself; the norm's sum needs them all)
  lk_add_rmsnorm_row<true>(tail.x, y, tail.w, tail.out, tail.d, tail.eps, row);
}
