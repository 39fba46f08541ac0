// SwiGLU: out = silu(g) * u, elementwise.
__global__ void lk_swiglu(const lk_act* __restrict__ g, const lk_act* __restrict__ u, lk_act* __restrict__ out, int n) {
  lk_pdl_entry();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const lk_acc a = g[i];
  out[i] = (lk_act)(a / ((lk_acc)1 + exp(-a)) * (lk_acc)u[i]);
}
