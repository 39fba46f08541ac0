// Rope, with the optional per-head RMS norm before it (qwen3's QK norm): a warp a head of a row, a lane a pair (PP
// pairs a lane: head_dim up to 64 PP).
//
// Heads [0, hq) of a row are its query heads, [hq, hq + hk) its key heads. A pair j of a head is (2j, 2j+1) under the
// adjacent mode (llama) and (j, j + hd/2) under the NeoX mode (qwen2, qwen3); its angle's cosine and sine come from
// the tables cos/sin[position][j] of the sidecar. With APPEND (the key/value cache append folded in), the key heads
// also land in the cache `kc` at the row's position, and heads [hq + hk, hq + 2 hk) copy the value heads into `vc`:
// caches are [heads][ctx][width] of lk_kv, as lk_kv_append writes them (kernels/kv.cuh). Reads pass L1: as a projection's tail (fuse_rope) the
// heads were written by the launch's other blocks.

struct lk_rope_args {
  lk_act* q;
  lk_act* k;
  const float* qn;
  const float* kn;
  const lk_act* cos_t;
  const lk_act* sin_t;
  const int* pos;
  int hq, hk, hd;
  float eps;
  const lk_act* v;
  lk_kv* kc;
  lk_kv* vc;
  int vd, ctx;
};

// The heads of every row: hq + hk, and hk more (the values) with APPEND.
template <bool APPEND>
LK_DEVICE int lk_rope_heads(const lk_rope_args& a) {
  return a.hq + a.hk * (APPEND ? 2 : 1);
}

// What a lane's pairs of a head at position p take besides the head: their angles' cosines and sines (from the
// sidecar's tables) and, under NORM, the norm's weights of their elements (w). Constants of the position alone, so a
// launch may load them before it waits for the one before it (the decode step's attention does).
template <bool NORM, int PP>
struct lk_rope_lane {
  lk_acc c[PP], s[PP], wa[PP], wb[PP];
};
template <bool NEOX, bool NORM, int PP>
LK_DEVICE lk_rope_lane<NORM, PP> lk_rope_lane_at(const lk_rope_args& a, const float* w, int p) {
  const int lane = threadIdx.x & 31, half = a.hd / 2;
  lk_rope_lane<NORM, PP> r;
#pragma unroll
  for (int i = 0; i < PP; ++i) {
    const int j = lane + 32 * i;
    const int ia = NEOX ? j : 2 * j, ib = NEOX ? j + half : 2 * j + 1;
    const size_t t = (size_t)p * half + j;
    r.c[i] = j < half ? (lk_acc)a.cos_t[t] : (lk_acc)0;
    r.s[i] = j < half ? (lk_acc)a.sin_t[t] : (lk_acc)0;
    r.wa[i] = NORM && j < half ? (lk_acc)w[ia] : (lk_acc)0;
    r.wb[i] = NORM && j < half ? (lk_acc)w[ib] : (lk_acc)0;
  }
  return r;
}

// A lane's pairs of head x (hd wide; written by an earlier launch or this warp before a __syncwarp, read past L1):
// elements (ia, ib) of pair j = lane + 32 i, zeros past the head. Apart from their use (lk_rope_apply) so that a warp
// with several heads has all their loads in flight at once.
template <int PP>
struct lk_rope_in {
  lk_acc xa[PP], xb[PP];
};
template <bool NEOX, int PP>
LK_DEVICE lk_rope_in<PP> lk_rope_load(const lk_rope_args& a, const lk_act* x) {
  const int lane = threadIdx.x & 31, half = a.hd / 2;
  lk_rope_in<PP> in;
#pragma unroll
  for (int i = 0; i < PP; ++i) {
    const int j = lane + 32 * i;
    const int ia = NEOX ? j : 2 * j, ib = NEOX ? j + half : 2 * j + 1;
    in.xa[i] = j < half ? (lk_acc)__ldcg(x + ia) : (lk_acc)0;
    in.xb[i] = j < half ? (lk_acc)__ldcg(x + ib) : (lk_acc)0;
  }
  return in;
}

// A head's pairs as lk_rope_load read them, normed first under NORM, roped by the lane's constants k: each lane's
// pairs, their elements (ia, ib) and roped values (ya, yb) handed to put(ia, ib, ya, yb). The calling warp's lanes all
// take part (the norm's sum).
template <bool NEOX, bool NORM, int PP, class Put>
LK_DEVICE void lk_rope_apply(const lk_rope_args& a, const lk_rope_in<PP>& in, const lk_rope_lane<NORM, PP>& k,
                             Put&& put) {
  const int lane = threadIdx.x & 31, half = a.hd / 2;
  lk_acc ss = 0;
#pragma unroll
  for (int i = 0; i < PP; ++i) ss += in.xa[i] * in.xa[i] + in.xb[i] * in.xb[i];
  lk_acc scale = 1;
  if (NORM) scale = (lk_acc)1 / sqrt(lk_warp_sum(ss) / a.hd + (lk_acc)a.eps);
#pragma unroll
  for (int i = 0; i < PP; ++i) {
    const int j = lane + 32 * i;
    if (j >= half) break;
    const int ia = NEOX ? j : 2 * j, ib = NEOX ? j + half : 2 * j + 1;
    lk_acc va = in.xa[i], vb = in.xb[i];
    if (NORM) {
      va = va * scale * k.wa[i];
      vb = vb * scale * k.wb[i];
    }
    put(ia, ib, (lk_act)(va * k.c[i] - vb * k.s[i]), (lk_act)(va * k.s[i] + vb * k.c[i]));
  }
}

// Both, head x at position p, the constants loaded here (w the norm's weights).
template <bool NEOX, bool NORM, int PP, class Put>
LK_DEVICE void lk_rope_pairs(const lk_rope_args& a, const lk_act* x, const float* w, int p, Put&& put) {
  lk_rope_apply<NEOX, NORM, PP>(a, lk_rope_load<NEOX, PP>(a, x), lk_rope_lane_at<NEOX, NORM, PP>(a, w, p), put);
}

// Head h of row r by the calling warp.
template <bool NEOX, bool NORM, bool APPEND, int PP>
LK_DEVICE void lk_rope_head(const lk_rope_args& a, int r, int h) {
  const int p = *a.pos + r;
  if (APPEND && h >= a.hq + a.hk) {
    const int vh = h - a.hq - a.hk;
    lk_kv_put_row(a.vc, (size_t)a.hk * a.ctx * a.vd, (size_t)vh * a.ctx + p, a.vd, a.v + ((size_t)r * a.hk + vh) * a.vd);
    return;
  }
  const bool is_q = h < a.hq;
  lk_act* x = is_q ? a.q + ((size_t)r * a.hq + h) * a.hd : a.k + ((size_t)r * a.hk + (h - a.hq)) * a.hd;
  lk_rope_pairs<NEOX, NORM, PP>(a, x, is_q ? a.qn : a.kn, p, [&](int ia, int ib, lk_act ya, lk_act yb) {
    x[ia] = ya;
    x[ib] = yb;
#if LK_KV == 0
    if (APPEND && !is_q) {
      lk_kv* row = a.kc + ((size_t)(h - a.hq) * a.ctx + p) * a.hd;
      row[ia] = ya;
      row[ib] = yb;
    }
#endif
  });
#if LK_KV != 0
  if (APPEND && !is_q) {  // (the roped head as written above, converted a row at a time)
    __syncwarp();
    lk_kv_put_row(a.kc, (size_t)a.hk * a.ctx * a.hd, (size_t)(h - a.hq) * a.ctx + p, a.hd, x);
  }
#endif
}

// The launch: blocks of 4 warps over the heads (blockIdx.x), a row a blockIdx.y.
template <bool NEOX, bool NORM, bool APPEND, int PP>
__global__ void __launch_bounds__(128) lk_rope(lk_rope_args a) {
  lk_pdl_entry();
  const int h = blockIdx.x * 4 + (threadIdx.x >> 5);
  if (h < lk_rope_heads<APPEND>(a)) lk_rope_head<NEOX, NORM, APPEND, PP>(a, blockIdx.y, h);
}

// Ends the fused q/k/v projection of `rows` rows (fuse_rope): its last block ropes them and appends to the caches.
template <bool NEOX, bool NORM, int PP>
LK_DEVICE void lk_rope_after(const lk_rope_args& a, int rows) {
  if (!lk_last_block()) return;
  const int heads = lk_rope_heads<true>(a);
  for (int i = threadIdx.x >> 5; i < rows * heads; i += blockDim.x >> 5)
    lk_rope_head<NEOX, NORM, true, PP>(a, i / heads, i % heads);
}
