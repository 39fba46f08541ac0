// The GGUF v3 writer: header, metadata and tensor infos first, then tensor data streamed in declaration order.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "compiler/gguf.hpp"

namespace lt::gguf {

// The writer's state: what was declared, where the data goes, and how far the current tensor is written.
struct Writer::Impl {
  std::filesystem::path path, part;
  uint64_t alignment;
  std::vector<std::pair<std::string, Value>> metadata;
  std::vector<TensorInfo> tensors;
  std::FILE* file = nullptr;
  std::vector<char> buffer;
  bool begun = false, finished = false;
  size_t current = 0;            // the tensor being written
  uint64_t current_written = 0;  // its bytes written so far
  uint64_t position = 0;         // bytes written to the file

  void put(const void* p, size_t n) {
    if (n == 0) return;
    if (std::fwrite(p, 1, n, file) != n) throw lt::Error("cannot write " + part.string() + ": " + std::strerror(errno));
    position += n;
  }
  template <typename T>
  void put(T v) {
    put(&v, sizeof(T));
  }
  void put_string(const std::string& s) {
    put(uint64_t{s.size()});
    put(s.data(), s.size());
  }
  void pad_to_alignment() {
    static const uint8_t zeros[256] = {};
    uint64_t pad = (alignment - position % alignment) % alignment;
    while (pad > 0) {
      const uint64_t n = std::min<uint64_t>(pad, sizeof zeros);
      put(zeros, n);
      pad -= n;
    }
  }
  void put_value(const Value& v, ValueType type) {
    if (v.type != type) throw lt::Error("a GGUF array holds a value of another type than its element type");
    switch (type) {
      case ValueType::U8:
        put(static_cast<uint8_t>(v.as_uint()));
        break;
      case ValueType::I8:
        put(static_cast<int8_t>(v.as_int()));
        break;
      case ValueType::U16:
        put(static_cast<uint16_t>(v.as_uint()));
        break;
      case ValueType::I16:
        put(static_cast<int16_t>(v.as_int()));
        break;
      case ValueType::U32:
        put(static_cast<uint32_t>(v.as_uint()));
        break;
      case ValueType::I32:
        put(static_cast<int32_t>(v.as_int()));
        break;
      case ValueType::U64:
        put(v.as_uint());
        break;
      case ValueType::I64:
        put(v.as_int());
        break;
      case ValueType::F32:
        put(static_cast<float>(v.as_float()));
        break;
      case ValueType::F64:
        put(v.as_float());
        break;
      case ValueType::Bool:
        put(static_cast<uint8_t>(v.as_bool() ? 1 : 0));
        break;
      case ValueType::String:
        put_string(v.as_string());
        break;
      case ValueType::Array: {
        const Array& a = v.as_array();
        put(static_cast<uint32_t>(a.type));
        put(uint64_t{a.items.size()});
        for (const Value& item : a.items) put_value(item, a.type);
        break;
      }
    }
  }
  // Moves on past tensors that are complete (including empty ones), padding after each.
  void advance() {
    while (current < tensors.size() && current_written == tensors[current].bytes) {
      pad_to_alignment();
      ++current;
      current_written = 0;
    }
  }
};

Writer::Writer(std::filesystem::path path, uint64_t alignment) : impl_(std::make_unique<Impl>()) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw lt::Error("GGUF alignment " + std::to_string(alignment) + " is not a power of two");
  impl_->path = std::move(path);
  impl_->part = impl_->path;
  impl_->part += ".part";
  impl_->alignment = alignment;
}

Writer::~Writer() {
  if (impl_->file) std::fclose(impl_->file);
  if (!impl_->finished && impl_->begun) {
    std::error_code ec;
    std::filesystem::remove(impl_->part, ec);
  }
}

void Writer::set(std::string key, Value v) {
  if (impl_->begun) throw lt::Error("GGUF metadata set after the data began: " + key);
  for (auto& [k, old] : impl_->metadata)
    if (k == key) {
      old = std::move(v);
      return;
    }
  impl_->metadata.emplace_back(std::move(key), std::move(v));
}

void Writer::add_tensor(std::string name, std::vector<uint64_t> dims, ggml::Type type) {
  if (impl_->begun) throw lt::Error("GGUF tensor declared after the data began: " + name);
  if (dims.size() > 4) throw lt::Error("tensor " + name + " has more than 4 dimensions");
  for (const auto& t : impl_->tensors)
    if (t.name == name) throw lt::Error("tensor " + name + " is declared twice");
  TensorInfo t;
  t.name = std::move(name);
  t.dims = std::move(dims);
  t.type = type;
  const uint64_t row = t.dims.empty() ? 1 : t.dims[0];
  t.bytes = ggml::row_bytes(type, row) * t.rows();
  uint64_t offset = 0;
  if (!impl_->tensors.empty()) {
    const TensorInfo& last = impl_->tensors.back();
    offset = last.offset + last.bytes;
    offset += (impl_->alignment - offset % impl_->alignment) % impl_->alignment;
  }
  t.offset = offset;
  impl_->tensors.push_back(std::move(t));
}

void Writer::begin_data() {
  Impl& w = *impl_;
  if (w.begun) throw lt::Error("GGUF begin_data called twice");
  bool has_alignment = false;
  for (auto& [k, v] : w.metadata)
    if (k == "general.alignment") {
      has_alignment = true;
      if (v.type != ValueType::U32 || v.as_uint() != w.alignment)
        throw lt::Error("general.alignment must be the writer's alignment, a u32 " + std::to_string(w.alignment));
    }
  if (!has_alignment && w.alignment != 32)
    w.metadata.insert(w.metadata.begin(), {"general.alignment", Value::u32(uint32_t(w.alignment))});
  w.file = std::fopen(w.part.c_str(), "wb");
  if (!w.file) throw lt::Error("cannot create " + w.part.string() + ": " + std::strerror(errno));
  w.begun = true;
  w.buffer.resize(4 << 20);
  std::setvbuf(w.file, w.buffer.data(), _IOFBF, w.buffer.size());
  w.put(std::array<char, 4>{'G', 'G', 'U', 'F'});
  w.put(uint32_t{3});
  w.put(uint64_t{w.tensors.size()});
  w.put(uint64_t{w.metadata.size()});
  for (const auto& [k, v] : w.metadata) {
    w.put_string(k);
    w.put(static_cast<uint32_t>(v.type));
    w.put_value(v, v.type);
  }
  for (const auto& t : w.tensors) {
    w.put_string(t.name);
    w.put(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) w.put(d);
    w.put(static_cast<uint32_t>(t.type));
    w.put(t.offset);
  }
  w.pad_to_alignment();
  w.position = 0;  // from here on, positions count from the data section's start
  w.advance();
}

void Writer::write(std::span<const uint8_t> bytes) {
  Impl& w = *impl_;
  if (!w.begun || w.finished) throw lt::Error("GGUF tensor data written outside begin_data() .. finish()");
  while (!bytes.empty()) {
    if (w.current >= w.tensors.size()) throw lt::Error("more GGUF tensor data written than the tensors declare");
    const TensorInfo& t = w.tensors[w.current];
    const uint64_t n = std::min<uint64_t>(bytes.size(), t.bytes - w.current_written);
    w.put(bytes.data(), n);
    w.current_written += n;
    bytes = bytes.subspan(n);
    w.advance();
  }
}

void Writer::finish() {
  Impl& w = *impl_;
  if (!w.begun) begin_data();
  if (w.finished) return;
  if (w.current < w.tensors.size())
    throw lt::Error("GGUF tensor " + w.tensors[w.current].name + " was not written in full (" +
                    std::to_string(w.current_written) + " of " + std::to_string(w.tensors[w.current].bytes) +
                    " bytes)");
  const bool ok = std::fflush(w.file) == 0;
  const bool closed = std::fclose(w.file) == 0;
  w.file = nullptr;
  if (!ok || !closed) throw lt::Error("cannot write " + w.part.string() + ": " + std::strerror(errno));
  std::filesystem::rename(w.part, w.path);
  w.finished = true;
}

}  // namespace lt::gguf
