// The embedding gather: each row's token picks a row of the embedding matrix, dequantized to activations.

// out[r][:] = E[tok[r]][:] * scale for r < gridDim.y (the product in f32: gemma3's sqrt(d_model), else 1, exact); a
// thread a 16-byte unit of the row.
template <class M>
__global__ void lk_embed(M m, const int* __restrict__ tok, lk_act* __restrict__ out, int d, float scale) {
  lk_pdl_entry();
  constexpr int E = lk_fmt<M>::E;
  const int r = blockIdx.y, u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= d / E) return;
  float w[E];
  lk_fmt<M>::expand(lk_fmt<M>::load(m, (size_t)tok[r], d, u), w);
#pragma unroll
  for (int e = 0; e < E; ++e) out[(size_t)r * d + u * E + e] = (lk_act)(w[e] * scale);
}
