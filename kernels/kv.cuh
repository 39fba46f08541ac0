// The key/value caches: their element, a row's write by a warp, a value's read, and the append launch.
//
// A cache is [heads][ctx][width] elements of lk_kv, the kv_cache knob's type (LK_KV): 0 the activations' own (lk_act),
// 1 f16, 2 bf16, 3 q8_0. A q8_0 cache holds its int8 values so, then each 32-block's f16 scale, [heads][ctx][width /
// 32], after all of them: a block's values are round(x / d) with d = max|x| / 127 (llama.cpp's q8_0 rule), read back
// as f16(d) * q. Widths are multiples of 32 under q8_0 (the knob's domain says so).
#ifndef LK_KV
#define LK_KV 0
#endif
#if LK_KV == 1
typedef __half lk_kv;
#elif LK_KV == 2
typedef __nv_bfloat16 lk_kv;
#elif LK_KV == 3
typedef signed char lk_kv;
#else
typedef lk_act lk_kv;
#endif

// The f16 scales of a q8_0 cache of `values` elements (they follow its values).
LK_DEVICE const __half* lk_kv_scales(const lk_kv* c, size_t values) {
  return reinterpret_cast<const __half*>(c + values);
}

// Value i of a cache of `values` elements.
LK_DEVICE lk_acc lk_kv_get(const lk_kv* c, size_t values, size_t i) {
#if LK_KV == 3
  return (lk_acc)__half2float(lk_kv_scales(c, values)[i / 32]) * (lk_acc)c[i];
#elif LK_KV == 1
  (void)values;
  return (lk_acc)__half2float(c[i]);
#elif LK_KV == 2
  (void)values;
  return (lk_acc)__bfloat162float(c[i]);
#else
  (void)values;
  return (lk_acc)c[i];
#endif
}

// Values i .. i + 7 of a cache of `values` elements (i a multiple of 8, so that they are one aligned load).
LK_DEVICE void lk_kv_get8(const lk_kv* c, size_t values, size_t i, lk_acc out[8]) {
#if LK_KV == 3
  const uint2 w = *reinterpret_cast<const uint2*>(c + i);
  const signed char* b = reinterpret_cast<const signed char*>(&w);
  const lk_acc d = (lk_acc)__half2float(lk_kv_scales(c, values)[i / 32]);
#pragma unroll
  for (int e = 0; e < 8; ++e) out[e] = d * (lk_acc)b[e];
#elif LK_KV == 1 || LK_KV == 2
  (void)values;
  const uint4 w = *reinterpret_cast<const uint4*>(c + i);
  const lk_kv* h = reinterpret_cast<const lk_kv*>(&w);
#pragma unroll
  for (int e = 0; e < 8; ++e) out[e] = (lk_acc)(float)h[e];
#else
  (void)values;
  if constexpr (sizeof(lk_kv) == 4) {
    const float4 a = *reinterpret_cast<const float4*>(c + i), b = *reinterpret_cast<const float4*>(c + i + 4);
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w, out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) out[e] = (lk_acc)c[i + e];
  }
#endif
}

// Row `row` (head h, position p: h * ctx + p) of a cache of `values` elements and `width` wide, written by the calling
// warp from `src`: activations this warp wrote before a __syncwarp, or an earlier launch (or another block, read past
// L1).
LK_DEVICE void lk_kv_put_row(lk_kv* c, size_t values, size_t row, int width, const lk_act* src) {
  const int lane = threadIdx.x & 31;
  lk_kv* dst = c + row * width;
#if LK_KV == 3
  __half* scales = const_cast<__half*>(lk_kv_scales(c, values)) + row * (width / 32);
  for (int b = 0; b < width / 32; ++b) {
    const float x = (float)__ldcg(src + b * 32 + lane);
    const float amax = lk_warp_max(fabsf(x));
    const float d = amax / 127.f, inv = amax > 0.f ? 127.f / amax : 0.f;
    dst[b * 32 + lane] = (signed char)__float2int_rn(x * inv);
    if (lane == 0) scales[b] = __float2half(d);
  }
#else
  (void)values;
  for (int i = lane; i < width; i += 32) {
    const lk_act x = __ldcg(src + i);
#if LK_KV == 1
    dst[i] = __float2half((float)x);
#elif LK_KV == 2
    dst[i] = __float2bfloat16((float)x);
#else
    dst[i] = x;
#endif
  }
#endif
}

// The key/value cache append: each row's roped key heads and value heads into the caches at the row's position; a
// block a (head, row), its first warp the key, its second the value.
__global__ void lk_kv_append(const lk_act* __restrict__ k, const lk_act* __restrict__ v, lk_kv* __restrict__ kc,
                             lk_kv* __restrict__ vc, const int* __restrict__ pos, int hk, int hd, int vd, int ctx) {
  lk_pdl_entry();
  const int h = blockIdx.x, r = blockIdx.y, p = *pos + r, warp = threadIdx.x >> 5;
  const size_t row = (size_t)h * ctx + p;
  if (warp == 0) lk_kv_put_row(kc, (size_t)hk * ctx * hd, row, hd, k + ((size_t)r * hk + h) * hd);
  if (warp == 1) lk_kv_put_row(vc, (size_t)hk * ctx * vd, row, vd, v + ((size_t)r * hk + h) * vd);
}
