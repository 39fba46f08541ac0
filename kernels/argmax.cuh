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

// A block's largest (value, index) of its threads', the first index among equal values, in thread 0.
LK_DEVICE void lk_block_argmax(lk_act& best, int& bi, int n) {
  __shared__ lk_act sv[32];
  __shared__ int si[32];
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
  }
}

// The blocks' partial arg-maxes and how many blocks are done (the last one resets it): one step runs at a time.
#define LK_ARGMAX_BLOCKS 256
__device__ lk_act lk_argmax_v[LK_ARGMAX_BLOCKS];
__device__ int lk_argmax_i[LK_ARGMAX_BLOCKS];
__device__ unsigned lk_argmax_done;

// The next token from the logits, the first index of the largest value; it advances the token, the generated run and
// the position on the device, so generation needs no round trip to the host. Each block (at most LK_ARGMAX_BLOCKS)
// takes a slice; the last block to finish folds the blocks' results in block order, so the result is the same
// whatever order the blocks ran in. With LK_FINAL_SOFTCAP (gemma2) each logit is softcapped first, in place: the
// logits the step leaves are the capped ones, and the arg-max is theirs.
__global__ void __launch_bounds__(256) lk_argmax(lk_act* __restrict__ x, int n, int* __restrict__ tok,
                                                 int* __restrict__ gen, int* __restrict__ count, int* __restrict__ pos,
                                                 int rows) {
  lk_pdl_entry_serial();
  __shared__ bool last;
  const int per = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = min(n, lo + per);
  lk_act best = -INFINITY;
  int bi = n;
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    lk_act v = x[i];
    if constexpr (LK_FINAL_SOFTCAP != 0) x[i] = v = lk_softcap(v, LK_FINAL_SOFTCAP);
    if (bi == n || v > best) {
      best = v;
      bi = i;
    }
  }
  lk_block_argmax(best, bi, n);
  if (threadIdx.x == 0) {
    lk_argmax_v[blockIdx.x] = best;
    lk_argmax_i[blockIdx.x] = bi;
    __threadfence();
    last = atomicAdd(&lk_argmax_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  best = -INFINITY;
  bi = n;
  for (int b = threadIdx.x; b < (int)gridDim.x; b += blockDim.x) {
    const lk_act v = ((volatile lk_act*)lk_argmax_v)[b];
    const int i = ((volatile int*)lk_argmax_i)[b];
    if (i < n && (bi == n || v > best || (v == best && i < bi))) {
      best = v;
      bi = i;
    }
  }
  lk_block_argmax(best, bi, n);
  if (threadIdx.x == 0) {
    const int t = bi < n ? bi : 0;
    *tok = t;
    gen[*count] = t;
    *count += 1;
    *pos += rows;
    lk_argmax_done = 0;
  }
}
