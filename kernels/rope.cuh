// Rope, with the optional per-head RMS norm before it (qwen3's QK norm): a block a head of a row, a thread a pair.
//
// Blocks [0, hq) take the query heads of row blockIdx.y, [hq, hq + hk) the key heads. A pair j of a head is
// (2j, 2j+1) under the adjacent mode (llama) and (j, j + hd/2) under the NeoX mode (qwen2, qwen3); its angle's cosine
// and sine come from the tables cos/sin[position][j] of the sidecar. With APPEND (the key/value cache append folded
// in), the key heads also land in the cache `kc` at the row's position, and blocks [hq + hk, hq + 2 hk) copy the value
// heads into `vc`: caches are [heads][ctx][width], as lk_kv_append writes them.

template <bool NEOX, bool NORM, bool APPEND>
__global__ void lk_rope(lk_act* __restrict__ q, lk_act* __restrict__ k, const float* __restrict__ qn,
                        const float* __restrict__ kn, const lk_act* __restrict__ cos_t, const lk_act* __restrict__ sin_t,
                        const int* __restrict__ pos, int hq, int hk, int hd, float eps, const lk_act* __restrict__ v,
                        lk_act* __restrict__ kc, lk_act* __restrict__ vc, int vd, int ctx) {
  lk_pdl_entry();
  __shared__ lk_acc scratch[32];
  const int r = blockIdx.y, h = blockIdx.x, j = threadIdx.x, half = hd / 2;
  if (APPEND && h >= hq + hk) {
    const int vh = h - hq - hk, p = *pos + r;
    for (int i = threadIdx.x; i < vd; i += blockDim.x) vc[((size_t)vh * ctx + p) * vd + i] = v[((size_t)r * hk + vh) * vd + i];
    return;
  }
  const bool is_q = h < hq;
  lk_act* x = is_q ? q + ((size_t)r * hq + h) * hd : k + ((size_t)r * hk + (h - hq)) * hd;
  const int a = NEOX ? j : 2 * j, b = NEOX ? j + half : 2 * j + 1;
  lk_acc xa = j < half ? (lk_acc)x[a] : 0, xb = j < half ? (lk_acc)x[b] : 0;
  if (NORM) {
    const float* w = is_q ? qn : kn;
    const lk_acc ss = lk_block_sum(xa * xa + xb * xb, scratch);
    const lk_acc scale = (lk_acc)1 / sqrt(ss / hd + (lk_acc)eps);
    if (j < half) {
      xa = xa * scale * (lk_acc)w[a];
      xb = xb * scale * (lk_acc)w[b];
    }
  }
  if (j >= half) return;
  const size_t t = (size_t)(*pos + r) * half + j;
  const lk_acc c = cos_t[t], s = sin_t[t];
  const lk_act ya = (lk_act)(xa * c - xb * s), yb = (lk_act)(xa * s + xb * c);
  x[a] = ya;
  x[b] = yb;
  if (APPEND && !is_q) {
    lk_act* row = kc + ((size_t)(h - hq) * ctx + *pos + r) * hd;
    row[a] = ya;
    row[b] = yb;
  }
}
