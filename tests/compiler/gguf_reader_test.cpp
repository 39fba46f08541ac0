// The GGUF reader's validation: each malformed file gets a FormatError naming the problem and its byte offset.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "compiler/gguf.hpp"
#include "support/test_support.hpp"

namespace lt::gguf {
namespace {

// A GGUF image built byte by byte, so that tests can write what no writer would.
struct Image {
  std::vector<uint8_t> b;
  Image& u8(uint8_t v) { return raw(&v, 1); }
  Image& u32(uint32_t v) { return raw(&v, 4); }
  Image& u64(uint64_t v) { return raw(&v, 8); }
  Image& str(const std::string& s) { return u64(s.size()).raw(s.data(), s.size()); }
  Image& raw(const void* p, size_t n) {
    auto* c = static_cast<const uint8_t*>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
  Image& header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    return raw("GGUF", 4).u32(version).u64(tensors).u64(kvs);
  }
  Image& kv_u32(const std::string& k, uint32_t v) { return str(k).u32(4).u32(v); }
  Image& tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (auto d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Image& pad(size_t alignment = 32) {
    while (b.size() % alignment) b.push_back(0);
    return *this;
  }
  Image& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
  size_t size() const { return b.size(); }
};

// Parses `img` and returns the FormatError it must raise.
FormatError error_of(const Image& img) {
  try {
    File::parse(img.b);
  } catch (const FormatError& e) {
    return e;
  }
  ADD_FAILURE() << "no FormatError";
  return FormatError("none", ~0ull);
}

#define EXPECT_FORMAT_ERROR(img, text, at)                                                          \
  do {                                                                                              \
    FormatError e_ = error_of(img);                                                                 \
    EXPECT_NE(std::string(e_.what()).find(text), std::string::npos) << e_.what();                   \
    EXPECT_EQ(e_.offset(), uint64_t(at)) << e_.what();                                              \
    EXPECT_NE(std::string(e_.what()).find("byte offset " + std::to_string(at)), std::string::npos); \
  } while (0)

Image valid_file() {
  Image img;
  img.header(2, 2).kv_u32("general.alignment", 32).str("general.architecture").u32(8).str("llama");
  img.tensor("a", {32, 2}, 0, 0).tensor("b", {64}, 8, 256);
  img.pad().zeros(256 + 68);
  return img;
}

TEST(GgufReader, ReadsAHandBuiltFile) {
  Image img = valid_file();
  File f = File::parse(img.b);
  EXPECT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.tensor("a")->bytes, 256u);
  EXPECT_EQ(f.tensor("b")->bytes, 68u);
  EXPECT_EQ(f.tensor("b")->rows(), 1u);
  EXPECT_EQ(f.tensor("a")->elements(), 64u);
  EXPECT_EQ(f.data(*f.tensor("b")).size(), 68u);
  EXPECT_EQ(f.find("general.architecture")->as_string(), "llama");
  EXPECT_THROW(f.find("general.architecture")->as_uint(), Error);
}

TEST(GgufReader, BadMagicAndVersions) {
  Image img = valid_file();
  img.b[0] = 'X';
  EXPECT_FORMAT_ERROR(img, "bad magic", 0);
  for (uint32_t v : {0u, 1u, 4u, 77u}) {
    Image i2;
    i2.header(0, 0, v);
    EXPECT_FORMAT_ERROR(i2, "unsupported GGUF version " + std::to_string(v), 4);
  }
  Image be;
  be.header(0, 0, 0x03000000u);
  EXPECT_FORMAT_ERROR(be, "big-endian", 4);
}

TEST(GgufReader, EveryTruncationIsAnError) {
  const Image img = valid_file();
  for (size_t n = 0; n < img.size(); ++n) {
    Image cut;
    cut.b.assign(img.b.begin(), img.b.begin() + static_cast<long>(n));
    EXPECT_THROW(File::parse(cut.b), FormatError) << n;
  }
  Image empty;
  EXPECT_FORMAT_ERROR(empty, "truncated file", 0);
  Image header_only;
  header_only.raw("GGUF", 4).u32(3).u64(0);
  EXPECT_FORMAT_ERROR(header_only, "truncated file: the metadata count needs 8 bytes but 0 remain", 16);
}

TEST(GgufReader, LengthsLongerThanTheFile) {
  Image s;
  s.header(0, 1).u64(1ull << 40).raw("key", 3).zeros(40);
  EXPECT_FORMAT_ERROR(s, "a metadata key of length 1099511627776 is longer than the rest of the file", 24);
  Image v;
  v.header(0, 1).str("k").u32(8).u64(1000).raw("abc", 3);
  EXPECT_FORMAT_ERROR(v, "a string value of length 1000", 24 + 9 + 4);
  Image a;
  a.header(0, 1).str("k").u32(9).u32(4).u64(1000000000000ull).u32(1);
  EXPECT_FORMAT_ERROR(a, "an array of 1000000000000 elements is longer than the rest of the file", 24 + 9 + 4 + 4);
  Image kv;
  kv.header(0, 1ull << 60);
  EXPECT_FORMAT_ERROR(kv, "metadata entries cannot fit", 16);
  Image t;
  t.header(1ull << 50, 0);
  EXPECT_FORMAT_ERROR(t, "tensor infos cannot fit", 8);
}

// A file's size does not bound what its metadata takes in memory (~50 bytes a value against 1 for a u8 on disk): the
// arrays' elements are bounded in all, before anything is allocated. Two arrays of 5 M u8 (10 MB on disk) would take
// ~500 MB; the second is refused at its length.
TEST(GgufReader, MetadataArraysAreBoundedInAll) {
  Image img;
  img.header(0, 2).str("a").u32(9).u32(0).u64(5'000'000).zeros(5'000'000);
  const size_t second = img.size() + 9 + 4 + 4;
  img.str("b").u32(9).u32(0).u64(5'000'000).zeros(5'000'000);
  EXPECT_FORMAT_ERROR(img, "the metadata's arrays hold more than 8000000 elements", second);
}

TEST(GgufReader, BadValues) {
  Image type;
  type.header(0, 1).str("k").u32(13).u32(0);
  EXPECT_FORMAT_ERROR(type, "unknown metadata value type 13", 24 + 9);
  Image elem;
  elem.header(0, 1).str("k").u32(9).u32(99).u64(0);
  EXPECT_FORMAT_ERROR(elem, "unknown element type 99", 24 + 9 + 4);
  Image b;
  b.header(0, 1).str("k").u32(7).u8(2);
  EXPECT_FORMAT_ERROR(b, "a bool value is 2", 24 + 9 + 4);
  Image dup;
  dup.header(0, 2).kv_u32("k", 1).kv_u32("k", 2);
  EXPECT_FORMAT_ERROR(dup, "duplicate metadata key 'k'", 24 + 17);
  Image deep;
  deep.header(0, 1).str("k").u32(9);
  for (int i = 0; i < 40; ++i) deep.u32(9).u64(1);
  deep.u32(0).u64(0);
  EXPECT_FORMAT_ERROR(deep, "nested deeper than 16", 24 + 9 + 4 + 16 * 12);
  Image align;
  align.header(0, 1).kv_u32("general.alignment", 48);
  EXPECT_FORMAT_ERROR(align, "general.alignment 48 is not a power of two", 24 + 25 + 4);
  Image align0;
  align0.header(0, 1).kv_u32("general.alignment", 0);
  EXPECT_FORMAT_ERROR(align0, "is not a power of two", 24 + 25 + 4);
  Image align64;
  align64.header(0, 1).str("general.alignment").u32(10).u64(32);
  EXPECT_FORMAT_ERROR(align64, "general.alignment must be a u32", 24 + 25 + 4);
}

TEST(GgufReader, BadTensorInfos) {
  const size_t t0 = 24;  // the first tensor info, with no metadata
  Image unknown;
  unknown.header(1, 0).tensor("w", {32}, 4, 0).pad().zeros(64);
  EXPECT_FORMAT_ERROR(unknown, "tensor 'w' has unknown type 4", t0 + 9 + 4 + 8);
  Image overflow;
  overflow.header(1, 0).tensor("w", {1ull << 32, 1ull << 32}, 0, 0).pad();
  EXPECT_FORMAT_ERROR(overflow, "dimensions multiply past 2^63", t0 + 9 + 4 + 8);
  Image negative;
  negative.header(1, 0).tensor("w", {~0ull}, 0, 0).pad();
  EXPECT_FORMAT_ERROR(negative, "negative dimension", t0 + 9 + 4);
  Image dims;
  dims.header(1, 0).tensor("w", {1, 1, 1, 1, 1}, 0, 0).pad();
  EXPECT_FORMAT_ERROR(dims, "has 5 dimensions (at most 4)", t0 + 9);
  Image block;
  block.header(1, 0).tensor("w", {33}, 8, 0).pad().zeros(64);
  EXPECT_FORMAT_ERROR(block, "row length 33 is not a multiple of its type q8_0's block of 32", t0 + 9);
  Image aligned;
  aligned.header(1, 0).tensor("w", {4}, 0, 16).pad().zeros(64);
  EXPECT_FORMAT_ERROR(aligned, "data offset 16 is not a multiple of the alignment 32", t0 + 9 + 4 + 8 + 4);
  Image outside;
  outside.header(1, 0).tensor("w", {32}, 0, 64).pad().zeros(128);
  EXPECT_FORMAT_ERROR(outside,
                      "tensor 'w' (128 bytes at data offset 64) lies outside the data section, which holds 128",
                      t0 + 9 + 4 + 8 + 4);
  Image far;
  far.header(1, 0).tensor("w", {32}, 0, 1ull << 62).pad().zeros(128);
  EXPECT_FORMAT_ERROR(far, "lies outside the data section", t0 + 9 + 4 + 8 + 4);
  Image overlap;
  overlap.header(2, 0).tensor("a", {64}, 0, 0).tensor("b", {8}, 0, 224).pad().zeros(256);
  EXPECT_FORMAT_ERROR(overlap, "tensor 'b''s data overlaps tensor 'a''s", t0 + 33 + 9 + 4 + 8 + 4);
  Image dup;
  dup.header(2, 0).tensor("a", {8}, 0, 0).tensor("a", {8}, 0, 32).pad().zeros(64);
  EXPECT_FORMAT_ERROR(dup, "duplicate tensor name 'a'", t0 + 33);
  Image name;
  name.header(1, 0).u64(1ull << 40).zeros(40);
  EXPECT_FORMAT_ERROR(name, "a tensor name of length 1099511627776", t0);
}

TEST(GgufReader, FilesOpenOrSayWhy) {
  test::TempDir dir;
  EXPECT_THROW(
      {
        try {
          File::open(dir / "missing.gguf");
        } catch (const FormatError&) {
          FAIL() << "a missing file is not a format error";
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
          throw;
        }
      },
      Error);
  auto empty = dir / "empty.gguf";
  { std::ofstream(empty.string()); }
  try {
    File::open(empty);
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(empty.string()), std::string::npos);
    EXPECT_EQ(e.offset(), 0u);
  }
}

TEST(GgufReader, EmptyTensorsReadAsEmpty) {
  // the fuzzer's two findings: a zero-element tensor, and one declared where an unpadded file has already ended
  Image img;
  img.header(2, 0).tensor("none", {0, 3}, 0, 0).tensor("also", {32, 0}, 8, 0);
  File f = File::parse(img.b);
  EXPECT_GT(f.data_start(), f.size());
  for (const auto& t : f.tensors()) {
    EXPECT_EQ(t.bytes, 0u);
    EXPECT_TRUE(f.data(t).empty());
    std::vector<float> out;
    ggml::dequantize(t.type, f.data(t).data(), out);
  }
}

TEST(GgufReader, RandomCorruptionNeverCrashes) {
  const Image img = valid_file();
  std::mt19937_64 rng(1);
  int errors = 0;
  for (int i = 0; i < 20000; ++i) {
    Image bad = img;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad.b[rng() % bad.size()] = static_cast<uint8_t>(rng());
    if (rng() % 4 == 0) bad.b.resize(rng() % bad.size());
    try {
      File f = File::parse(bad.b);
      for (const auto& t : f.tensors()) (void)f.data(t);
      (void)f.digest();
    } catch (const FormatError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace lt::gguf
