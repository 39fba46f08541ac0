// The arg-max that ends a step, and its warp reduction.

// A warp's largest (value, index), the first index among equal values, every lane holding it after.
LK_DEVICE void lk_warp_argmax(lk_act& best, int& bi) {
  for (int o = 16; o > 0; o >>= 1) {
    const lk_act ov = __shfl_xor_sync(0xffffffffu, best, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (ov > best || (ov == best && oi < bi)) {
      best = ov;
      bi = oi;
    }
  }
}

// The next token from the logits, the first index of the largest value; it advances the token, the generated run and
// the position on the device, so generation needs no round trip to the host.
__global__ void __launch_bounds__(1024) lk_argmax(const lk_act* __restrict__ x, int n, int* __restrict__ tok,
                                                  int* __restrict__ gen, int* __restrict__ count, int* __restrict__ pos,
                                                  int rows) {
  __shared__ lk_act sv[32];
  __shared__ int si[32];
  lk_act best = -INFINITY;
  int bi = n;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    if (bi == n || x[i] > best) {
      best = x[i];
      bi = i;
    }
  lk_warp_argmax(best, bi);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) {
    sv[warp] = best;
    si[warp] = bi;
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x >> 5;
    best = lane < warps ? sv[lane] : (lk_act)-INFINITY;
    bi = lane < warps ? si[lane] : n;
    lk_warp_argmax(best, bi);
    if (lane == 0) {
      const int t = bi < n ? bi : 0;
      *tok = t;
      gen[*count] = t;
      *count += 1;
      *pos += rows;
    }
  }
}
