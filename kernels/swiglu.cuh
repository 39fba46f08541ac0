// The dense FFN's gated product, elementwise: out = act(g) * u, ACT 0 SiLU (SwiGLU), 1 ggml's tanh GELU (gemma3's
// GEGLU: 0.5 g (1 + tanh(sqrt(2 / pi) (g + 0.044715 g^3)))).
template <int ACT>
__global__ void lk_swiglu(const lk_act* __restrict__ g, const lk_act* __restrict__ u, lk_act* __restrict__ out, int n) {
  lk_pdl_entry();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = (lk_act)(lk_gate<ACT>((lk_acc)g[i]) * (lk_acc)u[i]);
}
