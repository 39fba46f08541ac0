// ggml's block formats: the type table, half conversions, exact values of hand-built blocks, and round-trip error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "compiler/error.hpp"
#include "compiler/ggml_types.hpp"

namespace lt::ggml {
namespace {

void put16(uint8_t* p, uint16_t v) {
  std::memcpy(p, &v, 2);
}
void put32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}

std::vector<float> dequant(Type t, const std::vector<uint8_t>& block) {
  std::vector<float> y(traits_of(t).block_elems * (block.size() / traits_of(t).block_bytes));
  dequantize(t, block.data(), y);
  return y;
}

TEST(GgmlTypes, TableHasGgmlBlockShapes) {
  struct Want {
    Type t;
    uint32_t elems, bytes;
  };
  for (auto w : {Want{Type::F32, 1, 4},   {Type::F16, 1, 2},        {Type::BF16, 1, 2},       {Type::Q4_0, 32, 18},
                 {Type::Q4_1, 32, 20},    {Type::Q5_0, 32, 22},     {Type::Q5_1, 32, 24},     {Type::Q8_0, 32, 34},
                 {Type::Q8_1, 32, 36},    {Type::Q2_K, 256, 84},    {Type::Q3_K, 256, 110},   {Type::Q4_K, 256, 144},
                 {Type::Q5_K, 256, 176},  {Type::Q6_K, 256, 210},   {Type::Q8_K, 256, 292},   {Type::IQ2_XXS, 256, 66},
                 {Type::IQ2_XS, 256, 74}, {Type::IQ3_XXS, 256, 98}, {Type::IQ1_S, 256, 50},   {Type::IQ4_NL, 32, 18},
                 {Type::IQ3_S, 256, 110}, {Type::IQ2_S, 256, 82},   {Type::IQ4_XS, 256, 136}, {Type::I8, 1, 1},
                 {Type::I16, 1, 2},       {Type::I32, 1, 4},        {Type::I64, 1, 8},        {Type::F64, 1, 8},
                 {Type::IQ1_M, 256, 56},  {Type::TQ1_0, 256, 54},   {Type::TQ2_0, 256, 66},   {Type::MXFP4, 32, 17}}) {
    auto tr = traits_of(w.t);
    EXPECT_EQ(tr.block_elems, w.elems) << tr.name;
    EXPECT_EQ(tr.block_bytes, w.bytes) << tr.name;
    EXPECT_EQ(parse_type(tr.name), w.t);
  }
  EXPECT_FALSE(traits(4).has_value());
  EXPECT_FALSE(traits(1000).has_value());
  EXPECT_THROW(traits_of(static_cast<Type>(5)), Error);
  EXPECT_EQ(parse_type("Q4_K"), Type::Q4_K);
  EXPECT_FALSE(parse_type("q9_9").has_value());
  EXPECT_EQ(row_bytes(Type::Q4_K, 512), 288u);
  EXPECT_THROW(row_bytes(Type::Q4_K, 100), Error);
}

TEST(GgmlTypes, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.f), 0x7c00);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.f, -24)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.f, -14)), 0x0400);
  EXPECT_EQ(f32_to_f16(1.f + std::ldexp(1.f, -11)), 0x3c00);      // tie, to even
  EXPECT_EQ(f32_to_f16(1.f + 3 * std::ldexp(1.f, -11)), 0x3c02);  // tie, to even
  EXPECT_EQ(f32_to_f16(INFINITY), 0x7c00);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(NAN))));
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.f, -24));
  EXPECT_EQ(f16_to_f32(0x8000), -0.f);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;
    EXPECT_EQ(f32_to_f16(f16_to_f32(static_cast<uint16_t>(h))), h);
  }
  EXPECT_EQ(f32_to_bf16(1.f), 0x3f80);
  EXPECT_EQ(bf16_to_f32(0xc040), -3.f);
  EXPECT_EQ(f32_to_bf16(1.f + std::ldexp(1.f, -8)), 0x3f80);  // tie, to even
  EXPECT_EQ(f32_to_bf16(1.f + 3 * std::ldexp(1.f, -8)), 0x3f82);
}

TEST(GgmlTypes, ScalarTypesConvertElementwise) {
  std::vector<float> x = {1.f, -0.5f, 3.25f, 0.f};
  std::vector<uint8_t> buf(16);
  std::vector<float> y(4);
  for (Type t : {Type::F32, Type::F16, Type::BF16}) {
    quantize(t, x, buf.data());
    dequantize(t, buf.data(), y);
    EXPECT_EQ(y, x) << traits_of(t).name;
  }
}

TEST(GgmlTypes, Q8_0BlockIsScaleTimesSignedBytes) {
  std::vector<uint8_t> b(34);
  put16(b.data(), 0x3800);  // 0.5
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j * 8 - 128));
  auto y = dequant(Type::Q8_0, b);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.5f * (j * 8 - 128));
}

TEST(GgmlTypes, Q4_0AndQ4_1Blocks) {
  std::vector<uint8_t> b(18);
  put16(b.data(), 0x4000);  // 2
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  auto y = dequant(Type::Q4_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 2.f * (j - 8));
    EXPECT_EQ(y[j + 16], 2.f * (15 - j - 8));
  }
  std::vector<uint8_t> c(20);
  put16(c.data(), 0x3c00);      // d = 1
  put16(c.data() + 2, 0xc200);  // m = -3
  for (int j = 0; j < 16; ++j) c[4 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  y = dequant(Type::Q4_1, c);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], j - 3.f);
    EXPECT_EQ(y[j + 16], 15 - j - 3.f);
  }
}

TEST(GgmlTypes, Q5BlocksTakeTheFifthBitFromQh) {
  const uint32_t qh = 0xA5C3F00Fu;
  std::vector<uint8_t> b(22);
  put16(b.data(), 0x3c00);
  put32(b.data() + 2, qh);
  for (int j = 0; j < 16; ++j) b[6 + j] = static_cast<uint8_t>((j * 7 % 16) | ((j * 3 % 16) << 4));
  auto y = dequant(Type::Q5_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], float(((j * 7 % 16) | int(((qh >> j) & 1) << 4)) - 16)) << j;
    EXPECT_EQ(y[j + 16], float(((j * 3 % 16) | int(((qh >> (j + 16)) & 1) << 4)) - 16)) << j;
  }
  std::vector<uint8_t> c(24);
  put16(c.data(), 0x3800);      // d = 0.5
  put16(c.data() + 2, 0x3c00);  // m = 1
  put32(c.data() + 4, qh);
  for (int j = 0; j < 16; ++j) c[8 + j] = b[6 + j];
  y = dequant(Type::Q5_1, c);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * float((j * 7 % 16) | int(((qh >> j) & 1) << 4)) + 1.f);
    EXPECT_EQ(y[j + 16], 0.5f * float((j * 3 % 16) | int(((qh >> (j + 16)) & 1) << 4)) + 1.f);
  }
}

// Packs sixteen 6-bit Q3_K scales as ggml's Q3_K quantizer does.
void pack_q3_scales(const int* s, uint8_t* out) {
  std::memset(out, 0, 12);
  for (int j = 0; j < 16; ++j) {
    int l = s[j];
    if (j < 8)
      out[j] = static_cast<uint8_t>(l & 0xf);
    else
      out[j - 8] |= static_cast<uint8_t>((l & 0xf) << 4);
    l >>= 4;
    out[j % 4 + 8] |= static_cast<uint8_t>(l << (2 * (j / 4)));
  }
}

// Packs eight 6-bit (scale, min) pairs as ggml's Q4_K/Q5_K quantizers do.
void pack_k4_scales(const int* sc, const int* m, uint8_t* out) {
  std::memset(out, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] = static_cast<uint8_t>(sc[j]);
      out[j + 4] = static_cast<uint8_t>(m[j]);
    } else {
      out[j + 4] = static_cast<uint8_t>((sc[j] & 0xf) | ((m[j] & 0xf) << 4));
      out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      out[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
    }
  }
}

// A deterministic byte pattern for code bytes.
uint8_t pattern(int i) {
  return static_cast<uint8_t>((i * 37 + 11) ^ (i >> 3));
}

TEST(GgmlTypes, Q2_KBlockElementByElement) {
  std::vector<uint8_t> b(84);
  for (int i = 0; i < 16; ++i) b[i] = static_cast<uint8_t>((i % 16) | (((i * 5) % 16) << 4));
  for (int i = 0; i < 64; ++i) b[16 + i] = pattern(i);
  put16(b.data() + 80, 0x3800);  // d = 0.5
  put16(b.data() + 82, 0x3400);  // dmin = 0.25
  auto y = dequant(Type::Q2_K, b);
  for (int i = 0; i < 256; ++i) {
    const int half = i / 128, w = i % 128, shift = 2 * (w / 32), byte = 32 * half + w % 32;
    const int code = (b[16 + byte] >> shift) & 3;
    const uint8_t sc = b[i / 16];
    EXPECT_EQ(y[i], 0.5f * (sc & 0xf) * code - 0.25f * (sc >> 4)) << i;
  }
}

TEST(GgmlTypes, Q3_KBlockElementByElement) {
  std::vector<uint8_t> b(110);
  for (int i = 0; i < 32; ++i) b[i] = pattern(i + 100);
  for (int i = 0; i < 64; ++i) b[32 + i] = pattern(i);
  int scales[16];
  for (int j = 0; j < 16; ++j) scales[j] = (j * 13 + 5) % 64;
  pack_q3_scales(scales, b.data() + 96);
  put16(b.data() + 108, 0x4000);  // d = 2
  auto y = dequant(Type::Q3_K, b);
  for (int i = 0; i < 256; ++i) {
    const int half = i / 128, w = i % 128, shift = 2 * (w / 32), k = w % 32;
    const int low = (b[32 + 32 * half + k] >> shift) & 3;
    const bool high = b[k] & (1 << (4 * half + w / 32));
    EXPECT_EQ(y[i], 2.f * (scales[i / 16] - 32) * (low - (high ? 0 : 4))) << i;
  }
}

TEST(GgmlTypes, Q4_KAndQ5_KBlocksElementByElement) {
  int sc[8], m[8];
  for (int j = 0; j < 8; ++j) sc[j] = (j * 23 + 7) % 64, m[j] = (j * 41 + 3) % 64;
  std::vector<uint8_t> b(144);
  put16(b.data(), 0x3800);      // d = 0.5
  put16(b.data() + 2, 0x3400);  // dmin = 0.25
  pack_k4_scales(sc, m, b.data() + 4);
  for (int i = 0; i < 128; ++i) b[16 + i] = pattern(i);
  auto y = dequant(Type::Q4_K, b);
  for (int i = 0; i < 256; ++i) {
    const int g = i / 32, byte = 32 * (i / 64) + i % 32;
    const int q = g % 2 ? b[16 + byte] >> 4 : b[16 + byte] & 0xf;
    EXPECT_EQ(y[i], 0.5f * sc[g] * q - 0.25f * m[g]) << i;
  }
  std::vector<uint8_t> c(176);
  std::memcpy(c.data(), b.data(), 16);
  for (int i = 0; i < 32; ++i) c[16 + i] = pattern(i + 200);
  for (int i = 0; i < 128; ++i) c[48 + i] = pattern(i);
  y = dequant(Type::Q5_K, c);
  for (int i = 0; i < 256; ++i) {
    const int g = i / 32, byte = 32 * (i / 64) + i % 32;
    const int q = (g % 2 ? c[48 + byte] >> 4 : c[48 + byte] & 0xf) + ((c[16 + i % 32] >> g) & 1) * 16;
    EXPECT_EQ(y[i], 0.5f * sc[g] * q - 0.25f * m[g]) << i;
  }
}

TEST(GgmlTypes, Q6_KBlockElementByElement) {
  std::vector<uint8_t> b(210);
  for (int i = 0; i < 128; ++i) b[i] = pattern(i);
  for (int i = 0; i < 64; ++i) b[128 + i] = pattern(i + 300);
  for (int i = 0; i < 16; ++i) b[192 + i] = static_cast<uint8_t>(static_cast<int8_t>(i * 17 - 128));
  put16(b.data() + 208, 0x3400);  // d = 0.25
  auto y = dequant(Type::Q6_K, b);
  for (int i = 0; i < 256; ++i) {
    const int half = i / 128, w = i % 128, quarter = w / 32, l = w % 32;
    const uint8_t lb = b[64 * half + l + (quarter % 2) * 32];
    const int low = quarter < 2 ? lb & 0xf : lb >> 4;
    const int high = (b[128 + 32 * half + l] >> (2 * quarter)) & 3;
    const int scale = static_cast<int8_t>(b[192 + i / 16]);
    EXPECT_EQ(y[i], 0.25f * float(scale * ((low | (high << 4)) - 32))) << i;
  }
}

TEST(GgmlTypes, Mxfp4BlockIsE2M1TimesPowerOfTwo) {
  const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int e : {1, 120, 127, 130}) {
    std::vector<uint8_t> b(17);
    b[0] = static_cast<uint8_t>(e);
    for (int j = 0; j < 16; ++j) b[1 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    auto y = dequant(Type::MXFP4, b);
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(y[j], e2m1[j] * std::ldexp(1.f, e - 127)) << e << " " << j;
      EXPECT_EQ(y[j + 16], e2m1[15 - j] * std::ldexp(1.f, e - 127)) << e << " " << j;
    }
  }
}

// IQ4_NL and IQ4_XS: each element d times its code's value in ggml's kvalues_iq4nl (IQ4_XS: times its sub-block's
// 6-bit scale - 32, low nibbles from scales_l, high bits from scales_h).
TEST(GgmlTypes, Iq4BlocksElementByElement) {
  const int kv[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  std::vector<uint8_t> nl(18);
  nl[0] = 0x00, nl[1] = 0x34;  // f16 0.25
  for (int j = 0; j < 16; ++j) nl[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  auto y = dequant(Type::IQ4_NL, nl);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.25f * float(kv[j])) << j;
    EXPECT_EQ(y[j + 16], 0.25f * float(kv[15 - j])) << j;
  }
  std::vector<uint8_t> xs(136);
  xs[0] = 0x00, xs[1] = 0x34;  // d = 0.25
  const int ls[8] = {0, 1, 31, 32, 33, 47, 62, 63};
  uint16_t scales_h = 0;
  for (int ib = 0; ib < 8; ++ib) {
    xs[4 + ib / 2] |= static_cast<uint8_t>((ls[ib] & 0xf) << (4 * (ib % 2)));
    scales_h |= static_cast<uint16_t>((ls[ib] >> 4) << (2 * ib));
  }
  xs[2] = static_cast<uint8_t>(scales_h & 0xff), xs[3] = static_cast<uint8_t>(scales_h >> 8);
  for (int i = 0; i < 128; ++i) xs[8 + i] = static_cast<uint8_t>((i * 7) & 0xff);
  y = dequant(Type::IQ4_XS, xs);
  for (int i = 0; i < 256; ++i) {
    const int ib = i / 32, l = i % 32, byte = xs[8 + 16 * ib + l % 16];
    const int code = l < 16 ? byte & 0xf : byte >> 4;
    EXPECT_EQ(y[i], 0.25f * float(ls[ib] - 32) * float(kv[code])) << i;
  }
}

TEST(GgmlTypes, UnsupportedConversionsThrow) {
  std::vector<uint8_t> buf(1024);
  std::vector<float> y(256);
  EXPECT_THROW(dequantize(Type::IQ2_XXS, buf.data(), y), Error);
  EXPECT_THROW(quantize(Type::IQ2_XXS, y, buf.data()), Error);
  std::vector<float> odd(33);
  EXPECT_THROW(quantize(Type::Q8_0, odd, buf.data()), Error);
}

// The relative RMS error of quantizing `x` as `t` and reading it back.
double round_trip_error(Type t, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_bytes(t, x.size()));
  quantize(t, x, q.data());
  std::vector<float> y(x.size());
  dequantize(t, q.data(), y);
  double err = 0, ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (x[i] - y[i]) * double(x[i] - y[i]);
    ref += double(x[i]) * x[i];
  }
  return std::sqrt(err / ref);
}

// The quantizers write llama.cpp's blocks byte for byte: each type's bytes for 8 rows of 256 (drawn, positive,
// outliers, one element, zeros, half zeros, large, drawn; from integers, the same floats everywhere) hashed (FNV-1a)
// and compared with the hash of ggml's reference quantizers' bytes for the same rows (the version
// .llama/src.tar.xz holds, no importance matrix; bench/llama_cpu_check.sh compares whole files the same way).
TEST(GgmlTypes, QuantizersWriteLlamaCppsBlocksByteForByte) {
  std::vector<float> x(8 * 256);
  uint64_t s = 12345;
  for (size_t i = 0; i < x.size(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t v = int64_t(s >> 40) - (int64_t(1) << 23);
    x[i] = float(v) / float(1 << 23) * 0.05f;
  }
  for (int i = 256; i < 512; ++i) x[i] = std::fabs(x[i]);
  for (int i = 512; i < 768; ++i) x[i] = i % 37 == 0 ? x[i] * 40 : x[i];
  for (int i = 768; i < 1024; ++i) x[i] = i == 900 ? 1.f : 0.f;
  for (int i = 1024; i < 1280; ++i) x[i] = 0.f;
  for (int i = 1280; i < 1536; i += 2) x[i] = 0.f;
  for (int i = 1536; i < 1792; ++i) x[i] *= 1000.f;
  auto fnv = [](const std::vector<uint8_t>& b) {
    uint64_t h = 14695981039346656037ull;
    for (uint8_t c : b) h = (h ^ c) * 1099511628211ull;
    return h;
  };
  struct Want {
    Type t;
    uint64_t hash;
  };
  for (auto w : {Want{Type::Q4_0, 0x8a3657e1c6261211ull}, Want{Type::Q4_1, 0xf2e0f2040a751a0aull},
                 Want{Type::Q5_0, 0xf2e7675c79d19723ull}, Want{Type::Q5_1, 0x0ee4a50bf575134bull},
                 Want{Type::Q8_0, 0x789ea63ae2574d38ull}, Want{Type::MXFP4, 0xa0c9968fa6d122a0ull},
                 Want{Type::Q2_K, 0xe7cf383a3b2821f0ull}, Want{Type::Q3_K, 0x8ebc31ec1b9b89dcull},
                 Want{Type::Q4_K, 0xf911ee4cacca94caull}, Want{Type::Q5_K, 0x9570ae3c8c3d2120ull},
                 Want{Type::Q6_K, 0xd02ea3d7dd81eebeull}, Want{Type::IQ4_NL, 0x7c695d87bca7cacaull},
                 Want{Type::IQ4_XS, 0x672acf69ff90e659ull}}) {
    std::vector<uint8_t> out(row_bytes(w.t, x.size()));
    quantize(w.t, x, out.data());
    EXPECT_EQ(fnv(out), w.hash) << traits_of(w.t).name;
  }
}

TEST(GgmlTypes, RoundTripErrorStaysWithinEachFormatsBound) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 0.05f);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> gauss(256 * 64), flat(256 * 64);
  for (auto& v : gauss) v = normal(rng);
  for (auto& v : flat) v = uniform(rng);
  struct Bound {
    Type t;
    double max_error;
  };
  for (auto b : {Bound{Type::F16, 1e-3},
                 {Type::BF16, 4e-3},
                 {Type::Q8_0, 0.006},
                 {Type::Q6_K, 0.03},
                 {Type::Q5_0, 0.05},
                 {Type::Q5_1, 0.04},
                 {Type::Q4_0, 0.1},
                 {Type::Q4_1, 0.08},
                 {Type::Q4_K, 0.08},
                 {Type::IQ4_NL, 0.08},
                 {Type::Q3_K, 0.2},
                 {Type::Q2_K, 0.4},
                 {Type::IQ4_XS, 0.08},
                 {Type::MXFP4, 0.2}}) {
    const double eg = round_trip_error(b.t, gauss), ef = round_trip_error(b.t, flat);
    EXPECT_LT(eg, b.max_error) << traits_of(b.t).name;
    EXPECT_LT(ef, b.max_error) << traits_of(b.t).name;
    EXPECT_GT(ef, 0.0) << traits_of(b.t).name;
  }
}

TEST(GgmlTypes, QuantizersSurviveNonFiniteAndExtremeInput) {
  std::vector<float> x(256);
  const float specials[] = {INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 1e-30f, 1e-45f, 0.f, -0.f, 65504.f, 70000.f};
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 == 0) ? specials[i % std::size(specials)] : float(i) - 128.f;
  for (Type t : {Type::F32, Type::F16, Type::BF16, Type::Q8_0, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1,
                 Type::Q4_K, Type::Q6_K, Type::MXFP4, Type::IQ4_NL, Type::IQ4_XS, Type::Q2_K, Type::Q3_K}) {
    std::vector<uint8_t> q(row_bytes(t, x.size()));
    quantize(t, x, q.data());
    std::vector<float> y(x.size());
    dequantize(t, q.data(), y);
  }
  std::vector<float> tiny(256, 1e-40f);
  for (Type t : {Type::Q8_0, Type::Q4_K, Type::Q6_K, Type::IQ4_NL, Type::IQ4_XS, Type::Q2_K, Type::Q3_K}) {
    std::vector<uint8_t> q(row_bytes(t, tiny.size()));
    quantize(t, tiny, q.data());
    std::vector<float> y(tiny.size());
    dequantize(t, q.data(), y);
    for (float v : y) EXPECT_TRUE(std::isfinite(v)) << traits_of(t).name;
  }
}

TEST(GgmlTypes, QuantizersKeepZerosAndExactGrids) {
  std::vector<float> zeros(256, 0.f), y(256);
  for (Type t : {Type::Q8_0, Type::Q4_0, Type::Q4_K, Type::Q6_K, Type::MXFP4, Type::Q2_K, Type::Q3_K, Type::IQ4_XS}) {
    std::vector<uint8_t> q(row_bytes(t, 256));
    quantize(t, zeros, q.data());
    dequantize(t, q.data(), y);
    for (float v : y) EXPECT_EQ(v, 0.f) << traits_of(t).name;
  }
  std::vector<float> grid(32);
  for (int j = 0; j < 32; ++j) grid[j] = 0.25f * float(j - 16);  // -4 .. 3.75 on a 1/4 grid: q8_0 is exact-ish
  std::vector<uint8_t> q(34);
  quantize(Type::Q8_0, grid, q.data());
  std::vector<float> back(32);
  dequantize(Type::Q8_0, q.data(), back);
  for (int j = 0; j < 32; ++j) EXPECT_NEAR(back[j], grid[j], 4.f / 127 / 2 + 1e-3f);
}

}  // namespace
}  // namespace lt::ggml
