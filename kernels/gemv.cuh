// The GEMV: R activation rows times a matrix, RPW output rows a warp, the weights streamed once in 16-byte units.

// y[r][j] = sum_i W[j][i] * x[r][i] (+ bias[j]) for r < R, j < n: x is R rows of k, y R rows of n. A warp takes RPW
// consecutive output rows; its lanes stride over the rows' 16-byte units, so a warp reads 512 contiguous bytes of a
// row at a time; the sums stay in lk_acc.
template <class M, int RPW, int R>
__global__ void __launch_bounds__(256) lk_gemv(M m, const lk_act* __restrict__ x, const float* __restrict__ bias,
                                               lk_act* __restrict__ y, int k, int n) {
  constexpr int E = lk_fmt<M>::E;
  const int lane = threadIdx.x & 31;
  const int row0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * RPW;
  if (row0 >= n) return;
  lk_acc acc[RPW][R];
#pragma unroll
  for (int i = 0; i < RPW; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = 0;
  const int units = k / E;
  for (int u = lane; u < units; u += 32) {
    float w[RPW][E];
#pragma unroll
    for (int i = 0; i < RPW; ++i) {
      const int row = min(row0 + i, n - 1);
      lk_fmt<M>::unit(m, (size_t)row, k, u, w[i]);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      lk_acc xv[E];
      lk_load<E>(x + (size_t)r * k + u * E, xv);
#pragma unroll
      for (int i = 0; i < RPW; ++i) {
        lk_acc s = 0;
#pragma unroll
        for (int e = 0; e < E; ++e) s += (lk_acc)w[i][e] * xv[e];
        acc[i][r] += s;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    const int row = row0 + i;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const lk_acc v = lk_warp_sum(acc[i][r]);
      if (lane == 0 && row < n) y[(size_t)r * n + row] = (lk_act)(v + (bias ? (lk_acc)bias[row] : (lk_acc)0));
    }
  }
}
