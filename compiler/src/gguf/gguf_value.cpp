// GGUF metadata values read as the types callers want, and the format error that names its offset.
#include <cmath>
#include <string>

#include "compiler/gguf.hpp"

namespace lt::gguf {

FormatError::FormatError(const std::string& what, uint64_t offset)
    : lt::Error(what + " (at byte offset " + std::to_string(offset) + ")"), offset_(offset) {}

namespace {
const char* type_name(ValueType t) {
  switch (t) {
    case ValueType::U8:
      return "u8";
    case ValueType::I8:
      return "i8";
    case ValueType::U16:
      return "u16";
    case ValueType::I16:
      return "i16";
    case ValueType::U32:
      return "u32";
    case ValueType::I32:
      return "i32";
    case ValueType::F32:
      return "f32";
    case ValueType::Bool:
      return "bool";
    case ValueType::String:
      return "string";
    case ValueType::Array:
      return "array";
    case ValueType::U64:
      return "u64";
    case ValueType::I64:
      return "i64";
    case ValueType::F64:
      return "f64";
  }
  return "unknown";
}

[[noreturn]] void mismatch(const Value& v, const char* wanted) {
  throw lt::Error(std::string("a GGUF metadata value of type ") + type_name(v.type) + " was read as " + wanted);
}
}  // namespace

uint64_t Value::as_uint() const {
  if (auto* u = std::get_if<uint64_t>(&v)) return *u;
  if (auto* i = std::get_if<int64_t>(&v)) {
    if (*i < 0) throw lt::Error("a negative GGUF metadata value was read as unsigned: " + std::to_string(*i));
    return static_cast<uint64_t>(*i);
  }
  if (auto* d = std::get_if<double>(&v)) {
    if (*d >= 0 && *d < 18446744073709551616.0 && std::floor(*d) == *d) return static_cast<uint64_t>(*d);
  }
  mismatch(*this, "an unsigned integer");
}

int64_t Value::as_int() const {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* u = std::get_if<uint64_t>(&v)) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) mismatch(*this, "a signed integer");
    return static_cast<int64_t>(*u);
  }
  if (auto* d = std::get_if<double>(&v)) {
    if (*d >= -9223372036854775808.0 && *d < 9223372036854775808.0 && std::floor(*d) == *d)
      return static_cast<int64_t>(*d);
  }
  mismatch(*this, "a signed integer");
}

double Value::as_float() const {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  mismatch(*this, "a number");
}

bool Value::as_bool() const {
  if (auto* b = std::get_if<bool>(&v)) return *b;
  mismatch(*this, "a bool");
}

const std::string& Value::as_string() const {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  mismatch(*this, "a string");
}

const Array& Value::as_array() const {
  if (auto* a = std::get_if<Array>(&v)) return *a;
  mismatch(*this, "an array");
}

uint64_t TensorInfo::elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

uint64_t TensorInfo::rows() const {
  uint64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

}  // namespace lt::gguf
