// Block formats written from f32: the legacy 32-element blocks, the K-quants' super-blocks, MXFP4, IQ4_NL and IQ4_XS.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "compiler/ggml_types.hpp"
#include "ggml_blocks.hpp"

namespace lt::ggml::detail {
namespace {

// Truncates toward zero as a cast does, with NaN read as 0 and magnitudes past 2^30 clamped (non-finite input).
int truncate(float x) {
  if (!(std::fabs(x) < 1073741824.f)) return std::isnan(x) ? 0 : (x > 0 ? 1073741824 : -1073741824);
  return static_cast<int>(x);
}

// Rounds to nearest, ties to even, by adding 1.5·2^23 so the float unit does it (|x| < 2^22), without a call.
int nearest(float x) {
  if (!(std::fabs(x) < 4194303.f)) return truncate(x);
  const float shifted = x + 12582912.f;
  int32_t bits;
  std::memcpy(&bits, &shifted, 4);
  return (bits & 0x007fffff) - 0x00400000;
}

// Rounds half away from zero, as roundf does, for |x| < 2^23, without a library call.
int round_away(float x) {
  if (!(std::fabs(x) < 8388608.f)) return truncate(x);
  int i = static_cast<int>(x);
  const float frac = x - static_cast<float>(i);
  i += (frac >= 0.5f) - (frac <= -0.5f);
  return i;
}

// The element of `x` with the largest magnitude, sign kept.
float signed_absmax(const float* x, int n) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j)
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  return max;
}

// Q8_0: d = max|x|/127, codes rounded half away from zero.
void q8_0(const float* x, uint8_t* b) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.f, id = d != 0 ? 1.f / d : 0.f;
  store_u16(b, f32_to_f16(d));
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(round_away(x[j] * id)));
}

// Q4_0: the largest-magnitude element maps to code 0 (-8·d), the rest are rounded and clamped to 15.
void q4_0(const float* x, uint8_t* b) {
  const float d = signed_absmax(x, 32) / -8.f, id = d != 0 ? 1.f / d : 0.f;
  store_u16(b, f32_to_f16(d));
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(15, std::max(0, truncate(x[j] * id + 8.5f)));
    const int hi = std::min(15, std::max(0, truncate(x[j + 16] * id + 8.5f)));
    b[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// Q4_1: the range [min, max] split in 15 steps.
void q4_1(const float* x, uint8_t* b) {
  const float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
  const float d = (hi - lo) / 15.f, id = d != 0 ? 1.f / d : 0.f;
  store_u16(b, f32_to_f16(d));
  store_u16(b + 2, f32_to_f16(lo));
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(15, std::max(0, truncate((x[j] - lo) * id + 0.5f)));
    const int q1 = std::min(15, std::max(0, truncate((x[j + 16] - lo) * id + 0.5f)));
    b[4 + j] = static_cast<uint8_t>(q0 | (q1 << 4));
  }
}

// Packs 32 five-bit codes as Q5 blocks store them: fifth bits into `qh`, low nibbles into `qs`.
void pack_q5(const int* q, uint8_t* qh_out, uint8_t* qs) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>((q[j] & 0xf) | ((q[j + 16] & 0xf) << 4));
    qh |= uint32_t((q[j] >> 4) & 1) << j;
    qh |= uint32_t((q[j + 16] >> 4) & 1) << (j + 16);
  }
  store_u32(qh_out, qh);
}

// Q5_0: the largest-magnitude element maps to code 0 (-16·d).
void q5_0(const float* x, uint8_t* b) {
  const float d = signed_absmax(x, 32) / -16.f, id = d != 0 ? 1.f / d : 0.f;
  store_u16(b, f32_to_f16(d));
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = std::min(31, std::max(0, truncate(x[j] * id + 16.5f)));
  pack_q5(q, b + 2, b + 6);
}

// Q5_1: the range [min, max] split in 31 steps.
void q5_1(const float* x, uint8_t* b) {
  const float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
  const float d = (hi - lo) / 31.f, id = d != 0 ? 1.f / d : 0.f;
  store_u16(b, f32_to_f16(d));
  store_u16(b + 2, f32_to_f16(lo));
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = std::min(31, std::max(0, truncate((x[j] - lo) * id + 0.5f)));
  pack_q5(q, b + 4, b + 8);
}

// Fits value ≈ scale·q - min to a group of N elements with q in 0..MAXQ and min ≥ 0: the range first, then one
// least-squares refinement of (scale, min) for the codes the range chose.
template <int MAXQ, int N = 32>
void fit_group(const float* x, float& scale, float& min, uint8_t* codes) {
  float lo = std::min(0.f, *std::min_element(x, x + N));
  float hi = *std::max_element(x, x + N);
  std::fill(codes, codes + N, 0);  // (the block's codes where its stored scale rounds to 0: any code is its offset)
  if (hi <= lo) {
    scale = 0;
    min = -lo;
    return;
  }
  float s = (hi - lo) / float(MAXQ);
  const float is = 1.f / s;
  float sum_l = 0, sum_l2 = 0, sum_x = 0, sum_xl = 0;
  for (int j = 0; j < N; ++j) {
    const float l = static_cast<float>(std::clamp(nearest((x[j] - lo) * is), 0, MAXQ));
    sum_l += l;
    sum_l2 += l * l;
    sum_x += x[j];
    sum_xl += x[j] * l;
  }
  const float det = N * sum_l2 - sum_l * sum_l;
  if (det > 0) {
    const float s2 = (N * sum_xl - sum_l * sum_x) / det;
    const float lo2 = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (s2 > 0 && lo2 <= 0) {
      s = s2;
      lo = lo2;
    }
  }
  scale = s;
  min = -lo;
}

// Fits value ≈ scale·q - min to a group of N elements (q in 0..MAXQ, min ≥ 0) as ggml's reference K-quantizers do:
// errors weighted by `w` (squared, or absolute under MAD), the codes of the range first, then NSTEP + 1 candidate
// inverse scales (RMIN + RDELTA·i + MAXQ) / range, each refined by weighted least squares (a positive offset clamped
// to 0), the best kept. The sums in f32 in ggml's order, so that the blocks are llama.cpp's byte for byte; the best
// fit's codes in `codes` (0 for a constant group), which the block keeps where its stored scale rounds to 0, as ggml's.
template <int N, int MAXQ, bool MAD>
void search_weighted(const float* x, const float* w, float rmin, float rdelta, int nstep, float& scale, float& min,
                     uint8_t* codes) {
  float lo = std::min(0.f, *std::min_element(x, x + N));
  const float hi = *std::max_element(x, x + N);
  if (hi == lo) {
    std::fill(codes, codes + N, 0);
    scale = 0;
    min = -lo;
    return;
  }
  float sum_w = 0, sum_x = 0;
  for (int i = 0; i < N; ++i) {
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  auto error_of = [&](float s, float m, const int* l) {
    float e = 0;
    for (int i = 0; i < N; ++i) {
      const float diff = s * static_cast<float>(l[i]) + m - x[i];
      e += w[i] * (MAD ? std::fabs(diff) : diff * diff);
    }
    return e;
  };
  int l[N];
  float inv = float(MAXQ) / (hi - lo), best_scale = 1 / inv, best_lo = lo;
  for (int i = 0; i < N; ++i) l[i] = std::clamp(nearest(inv * (x[i] - lo)), 0, MAXQ);
  for (int i = 0; i < N; ++i) codes[i] = static_cast<uint8_t>(l[i]);
  float best = error_of(best_scale, best_lo, l);
  for (int step = 0; step <= nstep; ++step) {
    // (the candidates after a better fit start from its offset, not the range's: ggml's loop reuses its `min`)
    inv = (rmin + rdelta * static_cast<float>(step) + float(MAXQ)) / (hi - best_lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < N; ++i) {
      l[i] = std::clamp(nearest(inv * (x[i] - best_lo)), 0, MAXQ);
      const float wl = w[i] * static_cast<float>(l[i]);
      sum_l += wl;
      sum_l2 += wl * static_cast<float>(l[i]);
      sum_xl += wl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0) continue;
    float s = (sum_w * sum_xl - sum_x * sum_l) / det;
    float m = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (m > 0) {
      m = 0;
      s = sum_xl / sum_l2;
    }
    const float e = error_of(s, m, l);
    if (e < best) {
      best = e;
      best_scale = s;
      best_lo = m;
      for (int i = 0; i < N; ++i) codes[i] = static_cast<uint8_t>(l[i]);
    }
  }
  scale = best_scale;
  min = -best_lo;
}

// A 32-element Q4_K (MAXQ 15) or Q5_K (31) group as ggml's reference quantizers fit it: weights rms + |x|, twenty-one
// candidate scales from MAXQ - 1 (Q4_K) or sixteen from MAXQ - 0.5 (Q5_K).
template <int MAXQ>
void search_group(const float* x, float& scale, float& min, uint8_t* codes) {
  float sum_x2 = 0;
  for (int j = 0; j < 32; ++j) sum_x2 += x[j] * x[j];
  const float av_x = std::sqrt(sum_x2 / 32);
  float w[32];
  for (int j = 0; j < 32; ++j) w[j] = av_x + std::fabs(x[j]);
  if (MAXQ == 15)
    search_weighted<32, MAXQ, false>(x, w, -1.f, 0.1f, 20, scale, min, codes);
  else
    search_weighted<32, MAXQ, false>(x, w, -0.5f, 0.1f, 15, scale, min, codes);
}

// Q4_K (BITS 4) and Q5_K (BITS 5): eight groups of 32 fitted as scale·q - min by `Fit`, the scales and mins
// themselves stored as 6-bit multiples of the super-block's d and dmin; Q5_K's fifth bits in 32 bytes before the codes.
template <int BITS, void (*Fit)(const float*, float&, float&, uint8_t*)>
void k_quant(const float* x, uint8_t* b) {
  constexpr int kMax = (1 << BITS) - 1;
  float scales[8], mins[8];
  float max_scale = 0, max_min = 0;
  uint8_t codes[256];
  for (int g = 0; g < 8; ++g) {
    Fit(x + 32 * g, scales[g], mins[g], codes + 32 * g);
    max_scale = std::max(max_scale, scales[g]);
    max_min = std::max(max_min, mins[g]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t* sm = b + 4;
  std::fill(sm, sm + 12, 0);
  for (int g = 0; g < 8; ++g) {
    const auto ls = static_cast<uint8_t>(std::min(63, nearest(inv_scale * scales[g])));
    const auto lm = static_cast<uint8_t>(std::min(63, nearest(inv_min * mins[g])));
    if (g < 4) {
      sm[g] = ls;
      sm[g + 4] = lm;
    } else {
      sm[g + 4] = static_cast<uint8_t>((ls & 0xf) | ((lm & 0xf) << 4));
      sm[g - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      sm[g] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
  const uint16_t dh = f32_to_f16(max_scale / 63.f), dminh = f32_to_f16(max_min / 63.f);
  store_u16(b, dh);
  store_u16(b + 2, dminh);
  const float d = f16_to_f32(dh), dmin = f16_to_f32(dminh);
  for (int g = 0; g < 8; ++g) {
    uint8_t sc, m;
    scale_min_k4(g, sm, sc, m);
    const float ds = d * sc, dm = dmin * m;  // (codes by division, as ggml's: a product by 1 / ds rounds otherwise)
    if (ds == 0) continue;                   // (the fit's codes: any code is the offset)
    for (int j = 0; j < 32; ++j)
      codes[32 * g + j] = static_cast<uint8_t>(std::clamp(nearest((x[32 * g + j] + dm) / ds), 0, kMax));
  }
  uint8_t* q = b + (BITS == 5 ? 48 : 16);
  if (BITS == 5) std::fill(b + 16, b + 48, 0);
  for (int j = 0, g = 0; j < 256; j += 64, q += 32, g += 2)
    for (int l = 0; l < 32; ++l) {
      q[l] = static_cast<uint8_t>((codes[j + l] & 0xf) | ((codes[j + l + 32] & 0xf) << 4));
      if (BITS == 5) b[16 + l] |= static_cast<uint8_t>(((codes[j + l] >> 4) << g) | ((codes[j + l + 32] >> 4) << (g + 1)));
    }
}

// The scale of a 16-element Q6_K group that maps its largest-magnitude element to code -32, and its codes (+ 32; 0
// for a group of zeros).
float absmax_scale_q6(const float* x, uint8_t* codes) {
  const float max = signed_absmax(x, 16), inv = max != 0 ? -32.f / max : 0.f;
  for (int j = 0; j < 16; ++j)
    codes[j] = static_cast<uint8_t>(max != 0 ? std::clamp(nearest(inv * x[j]), -32, 31) + 32 : 0);
  return max / -32.f;
}

// The scale of a 16-element Q6_K group as ggml's reference quantizer picks it: from the absmax scale and eighteen
// neighbours, the one whose codes best fit x in the least-squares sense weighted by x²; its codes (+ 32; 0 for a group
// of zeros) in `codes`, which the block keeps where its stored scale rounds to 0, as ggml's.
float search_scale_q6(const float* x, uint8_t* codes) {
  const float max = signed_absmax(x, 16);
  if (std::fabs(max) < 1e-15f) {
    std::fill(codes, codes + 16, 0);
    return 0;
  }
  float best_scale = 0, best = 0;
  for (int step = 0; step <= 18; ++step) {
    const int offset = step == 0 ? 0 : (step <= 9 ? step - 10 : step - 9);  // 0, then -9..-1, 1..9
    const float inv = -(32.f + 0.1f * static_cast<float>(offset)) / max;
    float sum_lx = 0, sum_l2 = 0;
    int c[16];
    for (int j = 0; j < 16; ++j) {
      c[j] = std::clamp(nearest(inv * x[j]), -32, 31);
      const float l = static_cast<float>(c[j]), w = x[j] * x[j];
      sum_lx += w * x[j] * l;
      sum_l2 += w * l * l;
    }
    const bool better = step == 0 || (sum_l2 > 0 && sum_lx * sum_lx > best * sum_l2);
    if (step == 0) {
      best_scale = sum_l2 > 0 ? sum_lx / sum_l2 : 0;
      best = best_scale * sum_lx;
    } else if (better) {
      best_scale = sum_lx / sum_l2;
      best = best_scale * sum_lx;
    }
    if (better)
      for (int j = 0; j < 16; ++j) codes[j] = static_cast<uint8_t>(c[j] + 32);
  }
  return best_scale;
}

// Q6_K: sixteen groups of 16, each with the scale `Scale` picks; the group scales are stored as signed 8-bit
// multiples of d.
template <float (*Scale)(const float*, uint8_t*)>
void q6_k(const float* x, uint8_t* b) {
  float scales[16];
  float max_scale = 0, amax_scale = 0;
  uint8_t codes[256];
  for (int g = 0; g < 16; ++g) {
    scales[g] = Scale(x + 16 * g, codes + 16 * g);
    if (std::fabs(scales[g]) > amax_scale) {
      amax_scale = std::fabs(scales[g]);
      max_scale = scales[g];
    }
  }
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  auto* sc = reinterpret_cast<int8_t*>(b + 192);
  if (amax_scale == 0) {
    std::fill(b, b + 210, 0);
    return;
  }
  const float iscale = -128.f / max_scale;
  const uint16_t dh = f32_to_f16(1.f / iscale);
  store_u16(b + 208, dh);
  const float d = f16_to_f32(dh);
  for (int g = 0; g < 16; ++g) {
    sc[g] = static_cast<int8_t>(std::clamp(nearest(iscale * scales[g]), -128, 127));
    const float ds = d * sc[g];
    if (ds == 0) continue;  // (the scale's own codes: any code is 0)
    for (int j = 0; j < 16; ++j)
      codes[16 * g + j] = static_cast<uint8_t>(std::clamp(nearest(x[16 * g + j] / ds), -32, 31) + 32);
  }
  for (int j = 0; j < 256; j += 128, ql += 64, qh += 32) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t c1 = codes[j + l], c2 = codes[j + l + 32], c3 = codes[j + l + 64], c4 = codes[j + l + 96];
      ql[l] = static_cast<uint8_t>((c1 & 0xf) | ((c3 & 0xf) << 4));
      ql[l + 32] = static_cast<uint8_t>((c2 & 0xf) | ((c4 & 0xf) << 4));
      qh[l] = static_cast<uint8_t>((c1 >> 4) | ((c2 >> 4) << 2) | ((c3 >> 4) << 4) | ((c4 >> 4) << 6));
    }
  }
}

// MXFP4: a power-of-two scale chosen from the block's largest magnitude, each element the nearest E2M1 code.
void mxfp4(const float* x, uint8_t* b) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const int e = amax > 0 ? std::clamp(truncate(std::floor(std::log2(amax))) - 2 + 127, 0, 254) : 0;
  b[0] = static_cast<uint8_t>(e);
  const float d = mxfp4_scale(b[0]);
  auto code = [&](float v) {
    int best = 0;
    float best_err = INFINITY;
    for (int c = 0; c < 16; ++c) {
      const float err = std::fabs(d * kMxfp4Values[c] - v);
      if (err < best_err) {
        best_err = err;
        best = c;
      }
    }
    return best;
  };
  for (int j = 0; j < 16; ++j) b[1 + j] = static_cast<uint8_t>(code(x[j]) | (code(x[j + 16]) << 4));
}

// Packs 256 2-bit codes as Q2_K and Q3_K store them: each 128 elements in 32 bytes, elements l, l + 32, l + 64 and
// l + 96 in bits 0-1, 2-3, 4-5 and 6-7 of byte l.
void pack_2bit(const uint8_t* codes, uint8_t* qs) {
  for (int j = 0; j < 256; j += 128, qs += 32)
    for (int l = 0; l < 32; ++l)
      qs[l] = static_cast<uint8_t>((codes[j + l] & 3) | ((codes[j + l + 32] & 3) << 2) |
                                   ((codes[j + l + 64] & 3) << 4) | ((codes[j + l + 96] & 3) << 6));
}

// Q2_K: sixteen groups of 16 fitted as scale·q - min (q in 0..3) as ggml's reference quantizer fits them (weights |x|,
// absolute errors, sixteen candidate scales from 2.5), the scales and mins as 4-bit multiples of the super-block's d
// and dmin (a byte a group: scale low, min high).
void q2_k(const float* x, uint8_t* b) {
  float scales[16], mins[16], max_scale = 0, max_min = 0;
  uint8_t codes[256];
  for (int g = 0; g < 16; ++g) {
    float w[16];
    for (int j = 0; j < 16; ++j) w[j] = std::fabs(x[16 * g + j]);
    search_weighted<16, 3, true>(x + 16 * g, w, -0.5f, 0.1f, 15, scales[g], mins[g], codes + 16 * g);
    max_scale = std::max(max_scale, scales[g]);
    max_min = std::max(max_min, mins[g]);
  }
  std::fill(b, b + 84, 0);
  const float inv_scale = max_scale > 0 ? 15.f / max_scale : 0.f, inv_min = max_min > 0 ? 15.f / max_min : 0.f;
  for (int g = 0; g < 16; ++g)
    b[g] = static_cast<uint8_t>(std::min(15, nearest(inv_scale * scales[g])) |
                                (std::min(15, nearest(inv_min * mins[g])) << 4));
  const uint16_t dh = f32_to_f16(max_scale / 15.f), dminh = f32_to_f16(max_min / 15.f);
  store_u16(b + 80, dh);
  store_u16(b + 82, dminh);
  const float d = f16_to_f32(dh), dmin = f16_to_f32(dminh);
  for (int g = 0; g < 16; ++g) {
    const float ds = d * static_cast<float>(b[g] & 0xf), dm = dmin * static_cast<float>(b[g] >> 4);
    if (ds == 0) continue;  // (the fit's codes: any code is the offset)
    for (int j = 0; j < 16; ++j)
      codes[16 * g + j] = static_cast<uint8_t>(std::clamp(nearest((x[16 * g + j] + dm) / ds), 0, 3));
  }
  pack_2bit(codes, b + 16);
}

// The scale of a 16-element Q3_K group as ggml's reference quantizer picks it: the codes of the largest-magnitude
// element mapped to -4 (codes -4..3), then up to five rounds moving one code at a time wherever that improves the
// least-squares fit weighted by x² (the scale Σ w x l / Σ w l², in f32 in ggml's order); 0 for a group of zeros. Its
// codes (+ 4; 0 for zeros) in `codes`, which the block keeps where its stored scale rounds to 0, as ggml's.
float search_scale_q3(const float* x, uint8_t* codes) {
  const float max = signed_absmax(x, 16);
  if (std::fabs(max) < 1e-15f) {
    std::fill(codes, codes + 16, 0);
    return 0.f;
  }
  const float iscale = -4.f / max;
  int l[16];
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < 16; ++i) {
    l[i] = std::clamp(nearest(iscale * x[i]), -4, 3);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l[i]);
    suml2 += w * static_cast<float>(l[i]) * static_cast<float>(l[i]);
  }
  for (int round = 0; round < 5; ++round) {
    int changed = 0;
    for (int i = 0; i < 16; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * static_cast<float>(l[i]);
      if (slx <= 0) continue;
      float sl2 = suml2 - w * static_cast<float>(l[i]) * static_cast<float>(l[i]);
      const int c = std::clamp(nearest(x[i] * sl2 / slx), -4, 3);
      if (c == l[i]) continue;
      slx += w * x[i] * static_cast<float>(c);
      sl2 += w * static_cast<float>(c) * static_cast<float>(c);
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        l[i] = c;
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < 16; ++i) codes[i] = static_cast<uint8_t>(l[i] + 4);
  return suml2 > 0 ? sumlx / suml2 : 0.f;
}

// Q3_K: sixteen groups of 16, each with the scale search_scale_q3 picks (codes -4..3), the scales as signed 6-bit
// multiples of d (stored + 32: low nibbles in bytes 0..7, two high bits each in bytes 8..11); a code's third bit in the
// high-bit mask (bit g / 2 of byte l for element l of a 32-group g / 2), its low two as Q2_K's.
void q3_k(const float* x, uint8_t* b) {
  float scales[16], max_scale = 0, amax = 0;
  uint8_t codes[256];
  for (int g = 0; g < 16; ++g) {
    scales[g] = search_scale_q3(x + 16 * g, codes + 16 * g);
    if (std::fabs(scales[g]) > amax) {
      amax = std::fabs(scales[g]);
      max_scale = scales[g];
    }
  }
  std::fill(b, b + 110, 0);
  if (amax < 1e-15f) return;
  const float iscale = -32.f / max_scale;
  uint8_t* packed = b + 96;
  int ls[16];
  for (int g = 0; g < 16; ++g) {
    ls[g] = std::clamp(nearest(iscale * scales[g]), -32, 31);
    const int l = ls[g] + 32;
    packed[g % 8] |= static_cast<uint8_t>((l & 0xf) << (g < 8 ? 0 : 4));
    packed[8 + g % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (g / 4)));
  }
  const uint16_t dh = f32_to_f16(1.f / iscale);
  store_u16(b + 108, dh);
  const float d = f16_to_f32(dh);
  for (int g = 0; g < 16; ++g) {
    const float ds = d * static_cast<float>(ls[g]);
    for (int j = 0; j < 16; ++j) {
      const int e = 16 * g + j;  // (where the scale rounds to 0, the search's codes: any code is 0)
      const int c = ds != 0 ? std::clamp(nearest(x[e] / ds), -4, 3) + 4 : codes[e];  // 0..7
      if (c > 3) b[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
      codes[e] = static_cast<uint8_t>(c & 3);
    }
  }
  pack_2bit(codes, b + 32);
}

// The index of the IQ4 code nearest to x (in units of the scale).
int iq4_index(float x) {
  if (!(x > kIq4Values[0])) return 0;  // (NaN too)
  if (x >= kIq4Values[15]) return 15;
  int i = 0;
  while (x > kIq4Values[i + 1]) ++i;
  return x - kIq4Values[i] < kIq4Values[i + 1] - x ? i : i + 1;
}

// The scale of a 32-element group in IQ4 codes (signed: the table is not symmetric) as ggml's reference quantizer
// searches it, errors weighted by x²: the least-squares scale of the codes that map the largest-magnitude element to
// +127 (past the table's end: its last code), then of those of the inverse scales (code 0's -127 + i) / max for i in
// -TRIES..TRIES, the best fit kept; 0 for a group of zeros. The sums in f32 in ggml's order.
template <int TRIES>
float iq4_group(const float* x) {
  const float max = signed_absmax(x, 32);
  if (std::fabs(max) < 1e-15f) return 0;
  auto fit = [&](float inv, float& sum_qx, float& sum_q2) {
    sum_qx = sum_q2 = 0;
    for (int j = 0; j < 32; ++j) {
      const float q = kIq4Values[iq4_index(inv * x[j])], w = x[j] * x[j];
      sum_qx += w * q * x[j];
      sum_q2 += w * q * q;
    }
  };
  const float v0 = static_cast<float>(kIq4Values[0]);
  float sum_qx, sum_q2;
  fit(1 / (TRIES > 0 ? -max / v0 : max / v0), sum_qx, sum_q2);
  float d = sum_q2 > 0 ? sum_qx / sum_q2 : 0.f, best = d * sum_qx;
  for (int step = -TRIES; step <= TRIES; ++step) {
    fit(static_cast<float>(step + kIq4Values[0]) / max, sum_qx, sum_q2);
    if (sum_q2 > 0 && sum_qx * sum_qx > best * sum_q2) {
      d = sum_qx / sum_q2;
      best = d * sum_qx;
    }
  }
  return d;
}

// The codes of a group of 32 for scale d (the nearest code each, x / d as x times d's f32 inverse: ggml's order),
// packed as IQ4_NL packs them.
void iq4_pack(const float* x, float d, uint8_t* qs) {
  const float id = d != 0 ? 1.f / d : 0.f;
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(iq4_index(id * x[j]) | (iq4_index(id * x[j + 16]) << 4));
}

// IQ4_NL: one fitted scale a block, stored in f16; the codes from the f32 scale, as ggml's.
template <int TRIES>
void iq4_nl(const float* x, uint8_t* b) {
  const float d = iq4_group<TRIES>(x);
  store_u16(b, f32_to_f16(d));
  iq4_pack(x, d, b + 2);
}

// IQ4_XS: each group's fitted scale as a 6-bit multiple of d (offset by 32), d mapping the largest-magnitude scale
// to -32; each group's codes from its multiple of the f32 d, as ggml's.
template <int TRIES>
void iq4_xs(const float* x, uint8_t* b) {
  float scales[8], max_scale = 0, amax = 0;
  for (int ib = 0; ib < 8; ++ib) {
    scales[ib] = iq4_group<TRIES>(x + 32 * ib);
    if (std::fabs(scales[ib]) > amax) {
      amax = std::fabs(scales[ib]);
      max_scale = scales[ib];
    }
  }
  std::fill(b, b + 136, 0);
  const float d = -max_scale / 32.f, id = d != 0 ? 1.f / d : 0.f;
  store_u16(b, f32_to_f16(d));
  uint16_t scales_h = 0;
  for (int ib = 0; ib < 8; ++ib) {
    const int l = std::clamp(nearest(id * scales[ib]), -32, 31) + 32;
    b[4 + ib / 2] |= static_cast<uint8_t>((l & 0xf) << (4 * (ib % 2)));
    scales_h |= static_cast<uint16_t>((l >> 4) << (2 * ib));
    iq4_pack(x + 32 * ib, d * static_cast<float>(l - 32), b + 8 + 16 * ib);
  }
  store_u16(b + 2, scales_h);
}

}  // namespace

BlockQuantizer block_quantizer(Type t) {
  switch (t) {
    case Type::Q4_0:
      return q4_0;
    case Type::Q4_1:
      return q4_1;
    case Type::Q5_0:
      return q5_0;
    case Type::Q5_1:
      return q5_1;
    case Type::Q8_0:
      return q8_0;
    case Type::Q2_K:
      return q2_k;
    case Type::Q3_K:
      return q3_k;
    case Type::Q4_K:
      return k_quant<4, search_group<15>>;
    case Type::Q5_K:
      return k_quant<5, search_group<31>>;
    case Type::Q6_K:
      return q6_k<search_scale_q6>;
    case Type::MXFP4:
      return mxfp4;
    case Type::IQ4_NL:
      return iq4_nl<7>;
    case Type::IQ4_XS:
      return iq4_xs<7>;
    default:
      return nullptr;
  }
}

BlockQuantizer block_quantizer_fast(Type t) {
  switch (t) {
    case Type::Q4_K:
      return k_quant<4, fit_group<15>>;
    case Type::Q5_K:
      return k_quant<5, fit_group<31>>;
    case Type::Q6_K:
      return q6_k<absmax_scale_q6>;
    case Type::IQ4_NL:
      return iq4_nl<0>;
    case Type::IQ4_XS:
      return iq4_xs<0>;
    default:
      return block_quantizer(t);
  }
}

}  // namespace lt::ggml::detail
