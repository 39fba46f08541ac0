// Rope, with the optional per-head RMS norm before it (qwen3's QK norm): a block a head of a row, a thread a pair.
//
// Blocks [0, hq) take the query heads of row blockIdx.y, [hq, hq + hk) the key heads. A pair j of a head is
// (2j, 2j+1) under the adjacent mode (llama) and (j, j + hd/2) under the NeoX mode (qwen2, qwen3); its angle's cosine
// and sine come from the tables cos/sin[position][j] of the sidecar.

template <bool NEOX, bool NORM>
__global__ void lk_rope(lk_act* __restrict__ q, lk_act* __restrict__ k, const float* __restrict__ qn,
                        const float* __restrict__ kn, const lk_act* __restrict__ cos_t, const lk_act* __restrict__ sin_t,
                        const int* __restrict__ pos, int hq, int hk, int hd, float eps) {
  __shared__ lk_acc scratch[32];
  const int r = blockIdx.y, h = blockIdx.x, j = threadIdx.x, half = hd / 2;
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
  x[a] = (lk_act)(xa * c - xb * s);
  x[b] = (lk_act)(xa * s + xb * c);
}
