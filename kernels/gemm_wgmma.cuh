// gemm_wgmma: gemm_half's GEMM on Hopper's warpgroup tensor cores (wgmma, sm_90a), where half_gemm_shape's rule puts
// it (compiler/src/lane/schedule.cpp). The numbers are gemm_half's (each weight the dequant numerics' value rounded to
// f16, the activations' f16 copy, f32 sums); what changes is who waits on whom: wgmma runs asynchronously, so the
// block's threads unpack the next stage's weights while the tensor cores multiply this one's, where mma.sync's products
// took the same threads' issue slots (session 13's ncu: lk_gemm_h is instruction-bound on the unpacking, 7-14% of its
// instructions mma).
//
// lk_gemm_w<W, GLU, BN, WGS, KS>: a block is WGS warpgroups (4 warps each) and takes 64 WGS weight rows (GLU: 32 WGS
// outputs, each warp's 16 rows 8 of gate then the same 8 outputs' up rows, so a thread's sums hold both of an output)
// by BN activation rows (64, 128 or 256), KS of k a stage (64 or 128: KS / 64 32-groups a thread, two threads a row):
// - the weights: each thread loads its 32-group P stages ahead into registers and expands it (lk_gh_expand) into one
//   of two row-major f16 tiles while the tensor cores multiply the other; the warps' A fragments by ldmatrix;
// - the activations: LK_GH_STAGES stages by cp.async, laid out as wgmma's B operand in its canonical K-major form with
//   the 128-byte swizzle (a row's 64 f16 in 128 bytes, its 16-byte piece c at c ^ (row % 8); 8 rows a 1,024-byte
//   atom), read by the tensor cores through a matrix descriptor; 8 threads copy a row (4 whole sectors of global
//   memory, 8 distinct bank quads of shared memory);
// - per stage and 16 of k, BN / 64 wgmma.m64n64k16 (A from registers), one commit, one wait before the barrier.
// Each output is the f32 sum over k in 16-element steps in order (a split GEMM's parts then added in their order).
// Q4_K weights are unpacked straight to f16 (lk_q4k_half: q f16(d sc) - f16(dmin m), within a unit in f16's last place
// of the dequant value rounded to f16).

#if LK_WITH_GEMM_HALF && defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LK_WGMMA 1
// A shared-memory matrix descriptor of a K-major operand in the 128-byte swizzle: its start address (a 1,024-byte
// atom's plus the k offset in bytes), 1,024 bytes between 8-row groups (the leading offset unused in this mode).
LK_DEVICE unsigned long long lk_wg_desc_sw128(const void* p) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(p);
  return (unsigned long long)((a & 0x3ffffu) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
         (1ull << 62);
}
LK_DEVICE void lk_wg_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
LK_DEVICE void lk_wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
LK_DEVICE void lk_wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// Shared memory written through the generic proxy (cp.async, stores) made visible to the tensor cores' reads.
LK_DEVICE void lk_fence_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// d (64 x 64 f32, a warpgroup's fragments) += a (64 x 16 f16, registers) b (16 x 64 f16, the descriptor's).
LK_DEVICE void lk_wgmma_n64(float (&d)[32], const int (&a)[4], unsigned long long b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
      "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, "
      "%35}, %36, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// Keeps the compiler from moving the accumulators' uses across the wait.
LK_DEVICE void lk_wg_pin(float (&d)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
#else
#define LK_WGMMA 0
#endif

#if LK_WITH_GEMM_HALF
// One block's tile: outputs out0 .. of `n` (of wg, under GLU of wu too) by activation rows act0 .. of `rows`; `ks`
// its part of k (a split GEMM's; its sums meet in `part`, counted in `count`); `yh` (or null) y's f16 copy.
template <class W, bool GLU, int BN, int WGS, int KS, int P = lk_gemm_h_prefetch(BN)>
LK_DEVICE void lk_gemm_w_tile(const W& wg, const W& wu, const __half* __restrict__ xh, const float* __restrict__ bias,
                              float* __restrict__ y, int k, int n, int rows, int out0, int act0,
                              float* __restrict__ part, int* __restrict__ count, lk_ksplit ks,
                              __half* __restrict__ yh = nullptr) {
#if LK_WGMMA
  using F = lk_fmt<W>;
  constexpr int U = 32 / F::E;
  constexpr int GROUPS = KS / 32, MG = KS / 64, ROW = 2 * KS + 16;  // (a weight row padded: ldmatrix's rows' banks)
  constexpr int NB = BN / 64;                                       // wgmma n64 tiles a stage's 16 of k
  constexpr int WT = 64 * WGS * ROW, AT = BN * KS * 2;
  static_assert(BN % 64 == 0 && BN <= 256 && (KS == 64 || KS == 128), "n64 tiles; a stage one or two swizzle atoms");
  static_assert(lk_gemm_w_smem(BN, WGS, KS) == 2 * WT + LK_GH_STAGES * AT + 1024,
                "the shared memory as shapes.cuh says");
  extern __shared__ __align__(16) unsigned char lk_smem_raw[];
  // (the activations' stages on 1,024-byte atoms: the dynamic shared memory's start rounded up)
  unsigned char* const lk_smem =
      lk_smem_raw + ((1024u - ((unsigned)__cvta_generic_to_shared(lk_smem_raw) & 1023u)) & 1023u);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int kb = k / 32, kstages = (kb + GROUPS - 1) / GROUPS;
  const int per = (kstages + ks.zs - 1) / ks.zs, k0 = min(kstages, ks.z * per);
  const int nst = min(kstages, k0 + per) - k0;
  unsigned char* const acts = lk_smem + 2 * WT;
  static_assert(2 * WT % 1024 == 0, "the activations' stages start on an atom");

  // The thread's 32-groups: tile row `row`, groups gi + 2 m of each stage. Under GLU tile row 16 w + j is gate's output
  // out0 + 8 w + j for j < 8, else up's output out0 + 8 w + j - 8.
  const int row = tid / 2, gi = tid % 2;
  const bool up = GLU && (row & 8);
  const int orow = GLU ? (row >> 4) * 8 + (row & 7) : row;
  const W w = lk_pick(up, wg, wu);
  const size_t wrow = (size_t)min(out0 + orow, n - 1);
  using Raw = typename F::Raw;
  Raw raw[P][MG][U];
  auto fetch = [&](int i, Raw(&r)[MG][U]) {
#pragma unroll
    for (int m = 0; m < MG; ++m) {
      const int b = min((k0 + i) * GROUPS + gi + 2 * m, kb - 1);
#pragma unroll
      for (int u = 0; u < U; ++u) r[m][u] = F::load(w, wrow, k, b * U + u);
    }
  };
  auto unpack = [&](int i, const Raw(&r)[MG][U], unsigned char* wt) {
#pragma unroll
    for (int m = 0; m < MG; ++m)
      lk_gh_expand<W, true>(r[m], (k0 + i) * GROUPS + gi + 2 * m < kb, wt + row * ROW + (gi + 2 * m) * 64);
  };
  // The activations of stage i into slot `slot`: 16-byte piece c (k 8c .. 8c + 7 of the stage) of row r in atom
  // column c / 8 (BN rows of 128 bytes each) at 128 r + 16 (c % 8 ^ r % 8); 8 consecutive threads 128 bytes of a row.
  auto load_acts = [&](int slot, int i) {
    const int kt = k0 + i;
    unsigned char* s = acts + slot * AT;
#pragma unroll
    for (int j = 0; j < BN * (KS / 8) / (128 * WGS); ++j) {
      const int q = j * 128 * WGS + tid, r = q / (KS / 8), c = q % (KS / 8);
      const int col = kt * KS + c * 8;
      const bool ok = act0 + r < rows && col < k;
      lk_cp16(s + (c >> 3) * BN * 128 + r * 128 + (((c & 7) ^ (r & 7)) << 4),
              ok ? xh + (size_t)(act0 + r) * k + col : xh, ok);
    }
  };

  float acc[NB][32] = {};
  auto multiply = [&](int i, const unsigned char* wt) {
    int af[KS / 16][4];
#pragma unroll
    for (int kk = 0; kk < KS / 16; ++kk)
      lk_ldmatrix4(af[kk], wt + (warp * 16 + (lane & 7) + 8 * ((lane >> 3) & 1)) * ROW + kk * 32 + 16 * (lane >> 4));
    const unsigned char* sb = acts + (i % LK_GH_STAGES) * AT;
    lk_wg_fence();
#pragma unroll
    for (int kk = 0; kk < KS / 16; ++kk)
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
        lk_wgmma_n64(acc[nb], af[kk], lk_wg_desc_sw128(sb + (kk >> 2) * BN * 128 + nb * 64 * 128 + (kk & 3) * 32));
    lk_wg_commit();
  };

  lk_gh_pipeline<P>(
      nst, raw, lk_smem, WT, fetch, unpack, multiply, load_acts,
      [&] {
        lk_wg_wait();
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) lk_wg_pin(acc[nb]);
      },
      [] { lk_fence_async_smem(); });
  if (!lk_gemm_parts<NB * 32, 128 * WGS>(&acc[0][0], part, count, ks)) return;
    // acc[nb][4 j + e]: tile row 16 warp + g (+ 8 for e >= 2), activation row 64 nb + 8 j + 2 t (+ 1 for odd e); under
    // GLU the + 8 row is the same output's up sum.
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < (GLU ? 2 : 4); ++e) {
        const int o = out0 + (GLU ? warp * 8 + g : warp * 16 + g + (e >= 2 ? 8 : 0));
        const int r = act0 + nb * 64 + j * 8 + 2 * t + (e & 1);
        if (o >= n || r >= rows) continue;
        const float v = GLU ? lk_glu(acc[nb][4 * j + e], acc[nb][4 * j + e + 2], lk_glu_act{nullptr, nullptr, 0.f, 1.f})
                            : acc[nb][4 * j + e] + (bias ? bias[o] : 0.f);
        if (y) y[(size_t)r * n + o] = v;  // (null: only the f16 copy is read)
        if (yh) yh[(size_t)r * n + o] = __float2half_rn(v);
      }
#else
  __trap();  // (built for a GPU without wgmma: the lowering never launches it there)
#endif
}

// lk_gemm_w<W, GLU, BN, WGS, KS>: blockIdx.x the output tile, blockIdx.y the activation tile, blockIdx.z the part of k;
// `yh` (or null) y's f16 copy.
template <class W, bool GLU, int BN, int WGS, int KS>
__global__ void __launch_bounds__(128 * WGS, lk_gemm_w_blocks(BN, WGS, KS))
    lk_gemm_w(W wg, W wu, const __half* __restrict__ xh, const float* __restrict__ bias, float* __restrict__ y, int k,
              int n, int rows, float* __restrict__ part, int* __restrict__ count, __half* __restrict__ yh) {
  lk_gemm_w_tile<W, GLU, BN, WGS, KS>(wg, wu, xh, bias, y, k, n, rows, blockIdx.x * lk_gemm_w_outputs(GLU, WGS),
                                      blockIdx.y * BN, part, count, lk_ksplit_grid(), yh);
}

// lk_gemm_w_parts<W, BN, WGS, KS>: lk_gemm_w over a group's matrices (gemm_half.cuh's lk_gemm_group), its units
// (lk_gemm_unit) along blockIdx.x; gx the group's output tiles.
template <class W, int BN, int WGS, int KS>
__global__ void __launch_bounds__(128 * WGS, lk_gemm_w_blocks(BN, WGS, KS))
    lk_gemm_w_parts(lk_gemm_group<W> g, const __half* __restrict__ xh, int k, int rows, int gx, int full, int split,
                    float* __restrict__ part, int* __restrict__ count) {
  lk_ksplit ks;
  const int tile = lk_gemm_unit(blockIdx.x, full, split, ks);
  const lk_gemm_part<W> t = lk_gemm_part_at(g, lk_gemm_w_outputs(false, WGS), tile % gx);
  lk_gemm_w_tile<W, false, BN, WGS, KS>(t.w, t.w, xh, t.bias, t.y, k, t.n, rows, t.out0, tile / gx * BN, part, count,
                                        ks);
}
#endif  // LK_WITH_GEMM_HALF
