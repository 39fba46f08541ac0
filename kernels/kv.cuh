// The key/value cache append: each row's roped key heads and value heads into the caches at the row's position.
//
// Caches are [heads][ctx][width]; a block a (head, row), its threads over the key's and the value's widths.
__global__ void lk_kv_append(const lk_act* __restrict__ k, const lk_act* __restrict__ v, lk_act* __restrict__ kc,
                             lk_act* __restrict__ vc, const int* __restrict__ pos, int hk, int hd, int vd, int ctx) {
  lk_pdl_entry();
  const int h = blockIdx.x, r = blockIdx.y, p = *pos + r;
  for (int i = threadIdx.x; i < hd; i += blockDim.x)
    kc[((size_t)h * ctx + p) * hd + i] = k[((size_t)r * hk + h) * hd + i];
  for (int i = threadIdx.x; i < vd; i += blockDim.x)
    vc[((size_t)h * ctx + p) * vd + i] = v[((size_t)r * hk + h) * vd + i];
}
