// GGUF checkpoints: a validating, memory-mapped reader and a v3 writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "compiler/error.hpp"
#include "compiler/ggml_types.hpp"

namespace lt::gguf {

// A malformed or unsupported GGUF file: the message names the problem and the byte offset where it was found.
class FormatError : public lt::Error {
 public:
  FormatError(const std::string& what, uint64_t offset);
  uint64_t offset() const { return offset_; }

 private:
  uint64_t offset_;
};

// GGUF's metadata value types, numbered as in the file.
enum class ValueType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

struct Value;
// An array value: its element type and its elements (nested arrays allowed).
struct Array {
  ValueType type = ValueType::U8;
  std::vector<Value> items;
  bool operator==(const Array&) const = default;
};

// One metadata value: its GGUF type and its content.
struct Value {
  ValueType type = ValueType::U32;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> v;

  static Value u32(uint32_t x) { return {ValueType::U32, uint64_t{x}}; }
  static Value u64(uint64_t x) { return {ValueType::U64, x}; }
  static Value i32(int32_t x) { return {ValueType::I32, int64_t{x}}; }
  static Value f32(float x) { return {ValueType::F32, double{x}}; }
  static Value boolean(bool x) { return {ValueType::Bool, x}; }
  static Value str(std::string s) { return {ValueType::String, std::move(s)}; }
  static Value array(ValueType t, std::vector<Value> items) { return {ValueType::Array, Array{t, std::move(items)}}; }

  // Numeric reads that accept any integer or float type; throw lt::Error on a type mismatch.
  uint64_t as_uint() const;
  int64_t as_int() const;
  double as_float() const;
  bool as_bool() const;
  const std::string& as_string() const;
  const Array& as_array() const;
  bool operator==(const Value&) const = default;
};

// A tensor's description: its name, dimensions (ggml order: dims[0] is the row length), type, and where its data
// lies relative to the start of the data section.
struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;
  ggml::Type type = ggml::Type::F32;
  uint64_t offset = 0;  // from the data section's start
  uint64_t bytes = 0;   // its data's size
  uint64_t elements() const;
  uint64_t rows() const;  // the product of dims[1..]
  bool operator==(const TensorInfo&) const = default;
};

// A GGUF file's content as read: header, metadata (in file order), tensor infos (in file order).
class File {
 public:
  // Maps and validates `path`; throws FormatError (malformed content), lt::NotFound (no such file) or lt::Error
  // (cannot open).
  static File open(const std::filesystem::path& path);
  // Validates an in-memory image (the fuzzer's and tests' entry point); `bytes` must outlive the File.
  static File parse(std::span<const uint8_t> bytes);

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t size() const { return bytes_.size(); }
  uint64_t data_start() const { return data_start_; }
  std::span<const uint8_t> bytes() const { return bytes_; }

  const std::vector<std::pair<std::string, Value>>& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* tensor(std::string_view name) const;
  // The tensor's bytes inside the mapped file.
  std::span<const uint8_t> data(const TensorInfo& t) const;

  // The checkpoint's identity: xxh64 of everything before the data section (header, metadata, tensor infos).
  uint64_t digest() const;

 private:
  File() = default;
  struct Mapping;
  std::unique_ptr<Mapping> mapping_;
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_start_ = 0;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> by_name_;
};

// A GGUF v3 writer that streams tensor data to disk: metadata and tensor infos first, then each tensor's bytes in
// the order declared (memory independent of the file's size).
class Writer {
 public:
  // Writes to `path` + ".part", renamed to `path` by finish(). An alignment other than 32 is recorded as
  // general.alignment (first in the metadata) unless the caller sets that key, which must then agree.
  explicit Writer(std::filesystem::path path, uint64_t alignment = 32);
  ~Writer();
  void set(std::string key, Value v);
  // Declares a tensor (dims in ggml order); its data must be written later, in declaration order.
  void add_tensor(std::string name, std::vector<uint64_t> dims, ggml::Type type);
  // Writes the header, the metadata and the tensor infos; call once, after every set/add_tensor.
  void begin_data();
  // Appends the next part of the current tensor's data; a tensor is complete when its bytes are all written.
  void write(std::span<const uint8_t> bytes);
  // Pads, checks every tensor was written in full, and closes the file.
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lt::gguf
