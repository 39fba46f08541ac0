// The GGUF writer: every value type and tensor layout written comes back unchanged through the reader.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <vector>

#include "compiler/gguf.hpp"
#include "support/test_support.hpp"

namespace lt::gguf {
namespace {

using test::TempDir;

// A value of every GGUF metadata type, arrays nested two deep included.
std::vector<std::pair<std::string, Value>> every_value_type() {
  return {
      {"t.u8", {ValueType::U8, uint64_t{200}}},
      {"t.i8", {ValueType::I8, int64_t{-100}}},
      {"t.u16", {ValueType::U16, uint64_t{60000}}},
      {"t.i16", {ValueType::I16, int64_t{-30000}}},
      {"t.u32", Value::u32(4000000000u)},
      {"t.i32", Value::i32(-2000000000)},
      {"t.f32", Value::f32(0.1f)},
      {"t.bool", Value::boolean(true)},
      {"t.string", Value::str("qwen3 \xe2\x9c\x93")},
      {"t.u64", Value::u64(18000000000000000000ull)},
      {"t.i64", {ValueType::I64, int64_t{-9000000000000000000ll}}},
      {"t.f64", {ValueType::F64, 2.718281828459045}},
      {"t.empty_string", Value::str("")},
      {"t.array_i32", Value::array(ValueType::I32, {Value::i32(1), Value::i32(-2), Value::i32(3)})},
      {"t.array_str", Value::array(ValueType::String, {Value::str("a"), Value::str(""), Value::str("ccc")})},
      {"t.array_empty", Value::array(ValueType::F32, {})},
      {"t.nested",
       Value::array(ValueType::Array,
                    {Value::array(ValueType::U8, {{ValueType::U8, uint64_t{1}}}),
                     Value::array(ValueType::String, {Value::str("x")}),
                     Value::array(ValueType::Array, {Value::array(ValueType::Bool, {Value::boolean(false)})})})},
  };
}

std::vector<uint8_t> pattern_bytes(uint64_t n, uint8_t salt) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + salt);
  return v;
}

TEST(GgufWriter, ReadOfWriteIsIdentity) {
  for (uint64_t alignment : {32u, 64u, 4096u}) {
    TempDir dir;
    auto path = dir / "x.gguf";
    struct T {
      std::string name;
      std::vector<uint64_t> dims;
      ggml::Type type;
    };
    std::vector<T> tensors = {{"a", {64, 3}, ggml::Type::F32},  {"b.weight", {256, 2, 3}, ggml::Type::Q4_K},
                              {"c", {32}, ggml::Type::Q8_0},    {"empty", {0, 4}, ggml::Type::F16},
                              {"d", {7}, ggml::Type::BF16},     {"e", {256, 1, 1, 2}, ggml::Type::Q6_K},
                              {"f", {32, 5}, ggml::Type::MXFP4}};
    Writer w(path, alignment);
    for (auto& [k, v] : every_value_type()) w.set(k, v);
    for (auto& t : tensors) w.add_tensor(t.name, t.dims, t.type);
    w.begin_data();
    std::vector<std::vector<uint8_t>> data;
    for (size_t i = 0; i < tensors.size(); ++i) {
      uint64_t rows = 1;
      for (size_t d = 1; d < tensors[i].dims.size(); ++d) rows *= tensors[i].dims[d];
      data.push_back(pattern_bytes(ggml::row_bytes(tensors[i].type, tensors[i].dims[0]) * rows, uint8_t(i)));
      // written in uneven pieces
      std::span<const uint8_t> rest = data.back();
      for (size_t piece = 1; !rest.empty(); piece *= 3) {
        auto n = std::min(piece, rest.size());
        w.write(rest.first(n));
        rest = rest.subspan(n);
      }
    }
    w.finish();

    File f = File::open(path);
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), alignment);
    EXPECT_EQ(f.data_start() % alignment, 0u);
    auto md = f.metadata();
    if (alignment != 32) {
      ASSERT_EQ(md.front().first, "general.alignment");
      EXPECT_EQ(md.front().second, Value::u32(uint32_t(alignment)));
      md.erase(md.begin());
    }
    EXPECT_EQ(md, every_value_type());
    ASSERT_EQ(f.tensors().size(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TensorInfo* t = f.tensor(tensors[i].name);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(&f.tensors()[i], t);
      EXPECT_EQ(t->dims, tensors[i].dims);
      EXPECT_EQ(t->type, tensors[i].type);
      EXPECT_EQ(t->offset % alignment, 0u);
      auto bytes = f.data(*t);
      EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), data[i].begin(), data[i].end())) << t->name;
    }
    EXPECT_EQ(f.size() % alignment, 0u);
    EXPECT_EQ(f.find("t.f32")->as_float(), double(0.1f));
    EXPECT_EQ(f.find("t.u32")->as_uint(), 4000000000u);
    EXPECT_EQ(f.find("missing"), nullptr);
    EXPECT_EQ(f.tensor("missing"), nullptr);
  }
}

TEST(GgufWriter, DigestCoversHeaderNotData) {
  TempDir dir;
  auto write = [&](const std::string& name, const std::string& value, uint8_t fill) {
    Writer w(dir / name);
    w.set("k", Value::str(value));
    w.add_tensor("t", {32}, ggml::Type::F32);
    w.begin_data();
    std::vector<uint8_t> d(128, fill);
    w.write(d);
    w.finish();
    return File::open(dir / name).digest();
  };
  EXPECT_EQ(write("a", "x", 1), write("b", "x", 2));
  EXPECT_NE(write("c", "x", 1), write("d", "y", 1));
}

TEST(GgufWriter, RefusesMisuse) {
  TempDir dir;
  {
    Writer w(dir / "short.gguf");
    w.add_tensor("t", {32}, ggml::Type::F32);
    w.begin_data();
    std::vector<uint8_t> d(100);
    w.write(d);
    EXPECT_THROW(w.finish(), Error);
    std::vector<uint8_t> more(100);
    EXPECT_THROW(w.write(more), Error);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "short.gguf"));
  EXPECT_FALSE(std::filesystem::exists(dir / "short.gguf.part"));
  EXPECT_THROW(Writer(dir / "x", 48), Error);
  Writer w(dir / "y");
  w.add_tensor("t", {32}, ggml::Type::Q8_0);
  EXPECT_THROW(w.add_tensor("t", {32}, ggml::Type::Q8_0), Error);
  EXPECT_THROW(w.add_tensor("u", {30}, ggml::Type::Q8_0), Error);
  EXPECT_THROW(w.add_tensor("v", {1, 1, 1, 1, 1}, ggml::Type::F32), Error);
  Writer mismatched(dir / "z", 64);
  mismatched.set("general.alignment", Value::u32(32));
  EXPECT_THROW(mismatched.begin_data(), Error);
}

TEST(GgufWriter, VersionTwoFilesReadTheSame) {
  TempDir dir;
  Writer w(dir / "v.gguf");
  w.set("general.architecture", Value::str("llama"));
  w.add_tensor("t", {32}, ggml::Type::F32);
  w.begin_data();
  std::vector<uint8_t> d(128, 7);
  w.write(d);
  w.finish();
  std::ifstream in(dir / "v.gguf", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  bytes[4] = 2;
  File f = File::parse(bytes);
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.find("general.architecture")->as_string(), "llama");
  EXPECT_EQ(f.data(f.tensors()[0])[5], 7);
}

TEST(GgufWriter, EveryReadableFuzzInputSurvivesARewrite) {
  TempDir dir;
  int rewritten = 0;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(std::filesystem::path(LT_SOURCE_DIR) / "tests/fuzz/corpus")) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    std::optional<File> original;
    try {
      original.emplace(File::parse(bytes));
    } catch (const FormatError&) {
      continue;
    }
    SCOPED_TRACE(e.path().string());
    const auto out = dir / "rewrite.gguf";
    {
      Writer w(out, original->alignment());
      for (const auto& [k, v] : original->metadata()) w.set(k, v);
      for (const auto& t : original->tensors()) w.add_tensor(t.name, t.dims, t.type);
      w.begin_data();
      for (const auto& t : original->tensors()) w.write(original->data(t));
      w.finish();
    }
    File again = File::open(out);
    EXPECT_EQ(again.metadata(), original->metadata());
    ASSERT_EQ(again.tensors().size(), original->tensors().size());
    for (size_t i = 0; i < again.tensors().size(); ++i) {
      const auto &a = again.tensors()[i], &b = original->tensors()[i];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.dims, b.dims);
      EXPECT_EQ(a.type, b.type);
      auto da = again.data(a), db = original->data(b);
      EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end()));
    }
    ++rewritten;
  }
  EXPECT_GT(rewritten, 10);
}

}  // namespace
}  // namespace lt::gguf
