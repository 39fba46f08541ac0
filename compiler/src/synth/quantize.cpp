// `quantize`: a checkpoint's matrices requantized to another type, laid out as llama.cpp's quantize tool does.
#include <algorithm>
#include <cctype>
#include <thread>
#include <vector>

#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "compiler/synth.hpp"
#include "mix.hpp"

namespace lt::synth {

using namespace detail;
using gguf::Value;

const char* const kMatrixTypeNames =
    "q8_0, q4_k_m, q5_k_m (llama.cpp's mixes), q4_k (q4_k_s), q5_k (q5_k_s), q6_k, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k "
    "(q3_k_s), mxfp4, iq4_nl, iq4_xs, f16, bf16 or f32";

std::optional<MatrixType> parse_matrix_type(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  MatrixType m;
  if (n == "q4_k_m" || n == "q5_k_m") {
    m.mixed = true;
    n.resize(4);
  } else if (n == "q3_k_s" || n == "q4_k_s" || n == "q5_k_s") {
    n.resize(4);  // (llama.cpp's names of the unmixed K types' file types)
  }
  const auto t = ggml::parse_type(n);
  if (!t || !ggml::traits_of(*t).quantizable) return std::nullopt;
  m.type = *t;
  return m;
}

namespace {

// What llama.cpp's choice of types reads of `in`'s model, from its metadata (a count it lacks: none or one).
MixModel mix_model(const gguf::File& in, uint32_t layers) {
  const Value* arch = in.find("general.architecture");
  const std::string a = arch && arch->type == gguf::ValueType::String ? arch->as_string() : "";
  auto count = [&](const char* key, uint64_t none) -> uint64_t {
    const Value* v = in.find(a + key);
    if (!v || v->type == gguf::ValueType::Array || v->type == gguf::ValueType::String ||
        v->type == gguf::ValueType::Bool)
      return none;
    return v->as_uint();
  };
  const uint64_t heads = count(".attention.head_count", 1);
  return MixModel::of(a, count(".block_count", layers), heads, count(".attention.head_count_kv", heads),
                      count(".expert_count", 0), in.tensor("output.weight") == nullptr);
}

// The type tensor `t` gets under `m`: a matrix (is_quantized_matrix) in m.type, laid out as m says (llama_type, or
// pure: fit_rows); the rest as it is.
Type target(const gguf::TensorInfo& t, const MatrixType& m, const MixModel& mm) {
  if (!is_quantized_matrix(t.name, t.dims.size())) return t.type;
  if (m.mixed || m.layout == Layout::Llama)
    return llama_type(t.name, t.dims[0], t.dims.size() == 3, m.type, m.mixed, mm);
  return fit_rows(m.type, t.dims[0]);
}

}  // namespace

uint64_t quantize(const gguf::File& in, const std::filesystem::path& out, const QuantizeOptions& options) {
  const MatrixType& m = options.type;
  if (!ggml::traits_of(m.type).quantizable)
    throw Error("quantize cannot write " + std::string(ggml::traits_of(m.type).name) + " matrices");
  if (m.mixed && m.type != Type::Q4_K && m.type != Type::Q5_K)
    throw Error("the _m mixes are q4_k_m and q5_k_m, not " + std::string(ggml::traits_of(m.type).name) + "_m");
  uint32_t layers = 0;
  for (const auto& t : in.tensors()) layers = std::max(layers, uint32_t(layer_of(t.name) + 1));
  const MixModel mm = mix_model(in, layers);

  gguf::Writer w(out, in.alignment());
  bool file_type_set = false, version_set = false;
  for (const auto& [key, value] : in.metadata()) {
    if (key == "general.file_type") {
      w.set(key, gguf::Value::u32(file_type(m.type, m.mixed)));
      file_type_set = true;
    } else {
      w.set(key, value);
      version_set |= key == "general.quantization_version";
    }
  }
  if (!file_type_set) w.set("general.file_type", gguf::Value::u32(file_type(m.type, m.mixed)));
  if (!version_set) w.set("general.quantization_version", gguf::Value::u32(2));
  std::vector<Type> types;
  uint64_t total = 0;
  for (const auto& t : in.tensors()) {
    types.push_back(target(t, m, mm));
    w.add_tensor(t.name, t.dims, types.back());
    total += ggml::row_bytes(types.back(), t.dims[0]) * t.rows();
  }
  w.begin_data();

  // A tensor a slab of rows at a time (about 32 MB of output), its rows split over the threads.
  const unsigned threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<uint8_t> slab;
  uint64_t written = 0;
  for (size_t i = 0; i < in.tensors().size(); ++i) {
    const gguf::TensorInfo& t = in.tensors()[i];
    const std::span<const uint8_t> src = in.data(t);
    if (types[i] == t.type) {
      for (uint64_t at = 0; at < src.size(); at += 32ull << 20) {
        const auto part = src.subspan(at, std::min<uint64_t>(32ull << 20, src.size() - at));
        w.write(part);
        if (options.progress) options.progress(written += part.size(), total);
      }
      continue;
    }
    const uint64_t row = t.dims[0], in_row = ggml::row_bytes(t.type, row), out_row = ggml::row_bytes(types[i], row);
    const uint64_t rows = t.rows(), per_slab = std::max<uint64_t>(1, (32ull << 20) / out_row);
    for (uint64_t r0 = 0; r0 < rows; r0 += per_slab) {
      const uint64_t n = std::min(per_slab, rows - r0);
      slab.resize(n * out_row);
      std::vector<std::exception_ptr> errors(threads);
      {
        std::vector<std::jthread> pool;
        for (unsigned k = 0; k < threads; ++k)
          pool.emplace_back([&, k] {
            try {
              std::vector<float> values(row);
              for (uint64_t r = k; r < n; r += threads) {
                ggml::dequantize(t.type, src.data() + (r0 + r) * in_row, values);
                ggml::quantize(types[i], values, slab.data() + r * out_row);
              }
            } catch (...) {
              errors[k] = std::current_exception();
            }
          });
      }
      for (auto& e : errors)
        if (e) std::rethrow_exception(e);
      w.write(slab);
      if (options.progress) options.progress(written += slab.size(), total);
    }
  }
  w.finish();
  return std::filesystem::file_size(out);
}

}  // namespace lt::synth
