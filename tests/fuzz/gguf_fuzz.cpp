// The GGUF reader's fuzz entry point: any bytes either parse into a File whose every tensor reads back (and, for the
// types lane-tune writes, quantizes again from whatever floats it held), or raise a FormatError; anything else (a
// crash, another exception, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compiler/gguf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = lt::gguf::File::parse(std::span<const uint8_t>(data, size));
    (void)f.digest();
    for (const auto& [key, value] : f.metadata()) {
      if (value.type == lt::gguf::ValueType::String) (void)value.as_string().size();
      if (value.type == lt::gguf::ValueType::Array) (void)value.as_array().items.size();
    }
    std::vector<float> out;
    std::vector<uint8_t> requantized;
    for (const auto& t : f.tensors()) {
      auto bytes = f.data(t);
      const auto traits = lt::ggml::traits_of(t.type);
      if (!traits.dequantizable || t.elements() > (1u << 16)) continue;
      out.resize(t.elements());
      if (bytes.size() != lt::ggml::row_bytes(t.type, out.size())) __builtin_trap();
      lt::ggml::dequantize(t.type, bytes.data(), out);
      if (!traits.quantizable) continue;
      requantized.resize(bytes.size());
      lt::ggml::quantize(t.type, out, requantized.data());
    }
  } catch (const lt::gguf::FormatError&) {
  }
  return 0;
}
