// The GGUF reader: maps a checkpoint and validates every byte it interprets before trusting it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <set>

#include "compiler/gguf.hpp"

namespace lt::gguf {

// A read-only mapping of a checkpoint file, unmapped when the File dies.
struct File::Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr) munmap(addr, size);
  }
};

namespace {

constexpr int kMaxArrayDepth = 16;
// Array elements the whole metadata may hold: a value takes ~50 bytes in memory against 1 on disk for a u8, so a file's
// size alone does not bound the memory its metadata takes. A large tokenizer holds well under a million.
constexpr uint64_t kMaxMetadataElements = 8'000'000;
constexpr uint32_t kMaxDims = 4;

std::string shown(std::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 80)) out += (static_cast<unsigned char>(c) < 32 || c == 127) ? '?' : c;
  if (s.size() > 80) out += "...";
  return out + "'";
}

// A read position in the file image; every read checks that its bytes exist.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t pos() const { return pos_; }
  uint64_t elements_left = kMaxMetadataElements;  // array elements the metadata may still hold
  uint64_t remaining() const { return bytes_.size() - pos_; }

  void need(uint64_t n, const char* what) const {
    if (n > remaining())
      throw FormatError("truncated file: " + std::string(what) + " needs " + std::to_string(n) + " bytes but " +
                            std::to_string(remaining()) + " remain",
                        pos_);
  }
  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string string(const char* what) {
    const uint64_t at = pos_;
    const auto len = read<uint64_t>(what);
    if (len > remaining())
      throw FormatError(std::string(what) + " of length " + std::to_string(len) +
                            " is longer than the rest of the file (" + std::to_string(remaining()) + " bytes)",
                        at);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
};

// The bytes one element of type `t` takes at least in the file, or 0 when `t` is not a value type.
uint64_t min_value_bytes(uint32_t t) {
  switch (static_cast<ValueType>(t)) {
    case ValueType::U8:
    case ValueType::I8:
    case ValueType::Bool:
      return 1;
    case ValueType::U16:
    case ValueType::I16:
      return 2;
    case ValueType::U32:
    case ValueType::I32:
    case ValueType::F32:
      return 4;
    case ValueType::U64:
    case ValueType::I64:
    case ValueType::F64:
    case ValueType::String:
      return 8;
    case ValueType::Array:
      return 12;
  }
  return 0;
}

Value read_value(Cursor& c, ValueType type, int depth) {
  Value v;
  v.type = type;
  switch (type) {
    case ValueType::U8:
      v.v = uint64_t{c.read<uint8_t>("a u8 value")};
      break;
    case ValueType::I8:
      v.v = int64_t{c.read<int8_t>("an i8 value")};
      break;
    case ValueType::U16:
      v.v = uint64_t{c.read<uint16_t>("a u16 value")};
      break;
    case ValueType::I16:
      v.v = int64_t{c.read<int16_t>("an i16 value")};
      break;
    case ValueType::U32:
      v.v = uint64_t{c.read<uint32_t>("a u32 value")};
      break;
    case ValueType::I32:
      v.v = int64_t{c.read<int32_t>("an i32 value")};
      break;
    case ValueType::U64:
      v.v = c.read<uint64_t>("a u64 value");
      break;
    case ValueType::I64:
      v.v = c.read<int64_t>("an i64 value");
      break;
    case ValueType::F32:
      v.v = double{c.read<float>("an f32 value")};
      break;
    case ValueType::F64:
      v.v = c.read<double>("an f64 value");
      break;
    case ValueType::Bool: {
      const uint64_t at = c.pos();
      const auto b = c.read<uint8_t>("a bool value");
      if (b > 1) throw FormatError("a bool value is " + std::to_string(b) + ", not 0 or 1", at);
      v.v = b == 1;
      break;
    }
    case ValueType::String:
      v.v = c.string("a string value");
      break;
    case ValueType::Array: {
      const uint64_t at = c.pos();
      if (depth >= kMaxArrayDepth)
        throw FormatError("arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels", at);
      const auto elem = c.read<uint32_t>("an array's element type");
      const uint64_t min_bytes = min_value_bytes(elem);
      if (min_bytes == 0) throw FormatError("an array has unknown element type " + std::to_string(elem), at);
      const uint64_t count_at = c.pos();
      const auto count = c.read<uint64_t>("an array's length");
      if (count > c.remaining() / min_bytes)
        throw FormatError("an array of " + std::to_string(count) + " elements is longer than the rest of the file (" +
                              std::to_string(c.remaining()) + " bytes)",
                          count_at);
      if (count > c.elements_left)
        throw FormatError("the metadata's arrays hold more than " + std::to_string(kMaxMetadataElements) +
                              " elements in all (this one " + std::to_string(count) + ")",
                          count_at);
      c.elements_left -= count;
      Array a;
      a.type = static_cast<ValueType>(elem);
      a.items.reserve(count);
      for (uint64_t i = 0; i < count; ++i) a.items.push_back(read_value(c, a.type, depth + 1));
      v.v = std::move(a);
      break;
    }
  }
  return v;
}

ValueType read_value_type(Cursor& c) {
  const uint64_t at = c.pos();
  const auto t = c.read<uint32_t>("a metadata value type");
  if (min_value_bytes(t) == 0) throw FormatError("unknown metadata value type " + std::to_string(t), at);
  return static_cast<ValueType>(t);
}

}  // namespace

File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

File File::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string why = "cannot open " + path.string() + ": " + std::strerror(errno);
    if (errno == ENOENT) throw lt::NotFound(why);
    throw lt::Error(why);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw lt::Error("cannot read " + path.string() + ": not a regular file");
  }
  auto mapping = std::make_unique<Mapping>();
  if (st.st_size > 0) {
    mapping->size = static_cast<size_t>(st.st_size);
    void* addr = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (addr == MAP_FAILED) throw lt::Error("cannot map " + path.string() + ": " + std::strerror(err));
    mapping->addr = addr;
  } else {
    ::close(fd);
  }
  std::span<const uint8_t> bytes(static_cast<const uint8_t*>(mapping->addr), mapping->size);
  try {
    File f = parse(bytes);
    f.mapping_ = std::move(mapping);
    return f;
  } catch (const FormatError& e) {
    std::string what = e.what();
    const std::string suffix = " (at byte offset " + std::to_string(e.offset()) + ")";
    if (what.ends_with(suffix)) what.resize(what.size() - suffix.size());
    throw FormatError(path.string() + ": " + what, e.offset());
  }
}

File File::parse(std::span<const uint8_t> bytes) {
  File f;
  f.bytes_ = bytes;
  Cursor c(bytes);
  c.need(4, "the GGUF magic");
  if (std::memcmp(bytes.data(), "GGUF", 4) != 0) throw FormatError("bad magic: this is not a GGUF file", 0);
  c.read<uint32_t>("the GGUF magic");
  f.version_ = c.read<uint32_t>("the GGUF version");
  if (f.version_ == 0x02000000u || f.version_ == 0x03000000u)
    throw FormatError("big-endian GGUF files are not supported", 4);
  if (f.version_ != 2 && f.version_ != 3)
    throw FormatError("unsupported GGUF version " + std::to_string(f.version_) + " (lane-tune reads versions 2 and 3)",
                      4);
  const uint64_t n_tensors_at = c.pos();
  const auto n_tensors = c.read<uint64_t>("the tensor count");
  const uint64_t n_kv_at = c.pos();
  const auto n_kv = c.read<uint64_t>("the metadata count");
  if (n_kv > c.remaining() / 13)
    throw FormatError(std::to_string(n_kv) + " metadata entries cannot fit in the rest of the file", n_kv_at);

  f.metadata_.reserve(n_kv);
  std::set<std::string, std::less<>> keys;
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t at = c.pos();
    std::string key = c.string("a metadata key");
    if (!keys.insert(key).second) throw FormatError("duplicate metadata key " + shown(key), at);
    const ValueType type = read_value_type(c);
    const uint64_t value_at = c.pos();
    Value v = read_value(c, type, 0);
    if (key == "general.alignment") {
      if (type != ValueType::U32) throw FormatError("general.alignment must be a u32", value_at);
      const uint64_t a = std::get<uint64_t>(v.v);
      if (a == 0 || (a & (a - 1)) != 0)
        throw FormatError("general.alignment " + std::to_string(a) + " is not a power of two", value_at);
      f.alignment_ = a;
    }
    f.metadata_.emplace_back(std::move(key), std::move(v));
  }

  if (n_tensors > c.remaining() / 24)
    throw FormatError(std::to_string(n_tensors) + " tensor infos cannot fit in the rest of the file", n_tensors_at);
  f.tensors_.reserve(n_tensors);
  std::vector<uint64_t> offset_fields;
  offset_fields.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    const uint64_t at = c.pos();
    t.name = c.string("a tensor name");
    if (f.by_name_.count(t.name)) throw FormatError("duplicate tensor name " + shown(t.name), at);
    const uint64_t dims_at = c.pos();
    const auto n_dims = c.read<uint32_t>("a tensor's dimension count");
    if (n_dims > kMaxDims)
      throw FormatError("tensor " + shown(t.name) + " has " + std::to_string(n_dims) + " dimensions (at most 4)",
                        dims_at);
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim_at = c.pos();
      const auto dim = c.read<uint64_t>("a tensor dimension");
      if (dim > static_cast<uint64_t>(INT64_MAX))
        throw FormatError("tensor " + shown(t.name) + " has a negative dimension", dim_at);
      if (__builtin_mul_overflow(elements, dim, &elements) || elements > static_cast<uint64_t>(INT64_MAX))
        throw FormatError("tensor " + shown(t.name) + "'s dimensions multiply past 2^63 elements", dim_at);
      t.dims.push_back(dim);
    }
    const uint64_t type_at = c.pos();
    const auto type = c.read<uint32_t>("a tensor type");
    const auto tr = ggml::traits(type);
    if (!tr) throw FormatError("tensor " + shown(t.name) + " has unknown type " + std::to_string(type), type_at);
    t.type = static_cast<ggml::Type>(type);
    const uint64_t row = t.dims.empty() ? 1 : t.dims[0];
    if (row % tr->block_elems != 0)
      throw FormatError("tensor " + shown(t.name) + "'s row length " + std::to_string(row) +
                            " is not a multiple of its type " + std::string(tr->name) + "'s block of " +
                            std::to_string(tr->block_elems),
                        dims_at);
    if (__builtin_mul_overflow(elements / tr->block_elems, uint64_t{tr->block_bytes}, &t.bytes))
      throw FormatError("tensor " + shown(t.name) + "'s size overflows", dims_at);
    offset_fields.push_back(c.pos());
    t.offset = c.read<uint64_t>("a tensor's data offset");
    if (t.offset % f.alignment_ != 0)
      throw FormatError("tensor " + shown(t.name) + "'s data offset " + std::to_string(t.offset) +
                            " is not a multiple of the alignment " + std::to_string(f.alignment_),
                        offset_fields.back());
    f.by_name_.emplace(t.name, f.tensors_.size());
    f.tensors_.push_back(std::move(t));
  }

  const uint64_t header_end = c.pos();
  f.data_start_ = header_end + (f.alignment_ - header_end % f.alignment_) % f.alignment_;
  const uint64_t data_size = f.data_start_ <= bytes.size() ? bytes.size() - f.data_start_ : 0;
  for (size_t i = 0; i < f.tensors_.size(); ++i) {
    const TensorInfo& t = f.tensors_[i];
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      throw FormatError("tensor " + shown(t.name) + " (" + std::to_string(t.bytes) + " bytes at data offset " +
                            std::to_string(t.offset) + ") lies outside the data section, which holds " +
                            std::to_string(data_size) + " bytes (truncated file?)",
                        offset_fields[i]);
  }
  std::vector<size_t> order(f.tensors_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return f.tensors_[a].offset < f.tensors_[b].offset; });
  const TensorInfo* prev = nullptr;
  for (size_t i : order) {
    const TensorInfo& t = f.tensors_[i];
    if (t.bytes == 0) continue;
    if (prev && prev->offset + prev->bytes > t.offset)
      throw FormatError("tensor " + shown(t.name) + "'s data overlaps tensor " + shown(prev->name) + "'s",
                        offset_fields[i]);
    prev = &t;
  }
  return f;
}

const Value* File::find(std::string_view key) const {
  for (const auto& [k, v] : metadata_)
    if (k == key) return &v;
  return nullptr;
}

const TensorInfo* File::tensor(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> File::data(const TensorInfo& t) const {
  if (t.bytes == 0) return {};
  if (data_start_ > bytes_.size() || t.offset > bytes_.size() - data_start_ ||
      t.bytes > bytes_.size() - data_start_ - t.offset)
    throw lt::Error("tensor " + shown(t.name) + " does not lie inside this file's data section");
  return bytes_.subspan(data_start_ + t.offset, t.bytes);
}

uint64_t File::digest() const {
  const size_t n = std::min<uint64_t>(data_start_, bytes_.size());
  return XXH64(bytes_.data(), n, 0);
}

}  // namespace lt::gguf
