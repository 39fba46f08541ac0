// The RMS norm with the residual add: x += add (when ADD), then out = x / sqrt(mean(x^2) + eps) * w, a block a row.

template <bool ADD>
__global__ void __launch_bounds__(1024) lk_add_rmsnorm(lk_act* __restrict__ x, const lk_act* __restrict__ add,
                                                       const float* __restrict__ w, lk_act* __restrict__ out, int d,
                                                       float eps) {
  lk_pdl_entry();
  __shared__ lk_acc scratch[32];
  const size_t base = (size_t)blockIdx.x * d;
  lk_acc ss = 0;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    lk_acc v = x[base + i];
    if (ADD) {
      const lk_act sum = (lk_act)(v + (lk_acc)add[base + i]);
      x[base + i] = sum;
      v = sum;
    }
    ss += v * v;
  }
  ss = lk_block_sum(ss, scratch);
  const lk_acc scale = (lk_acc)1 / sqrt(ss / d + (lk_acc)eps);
  for (int i = threadIdx.x; i < d; i += blockDim.x) out[base + i] = (lk_act)((lk_acc)x[base + i] * scale * (lk_acc)w[i]);
}
