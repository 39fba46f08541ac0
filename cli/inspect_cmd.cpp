// `lane-tune inspect`: what a GGUF checkpoint holds: architecture, hyperparameters, tensors, totals and identity.
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "compiler/digest.hpp"
#include "compiler/error.hpp"
#include "compiler/gguf.hpp"
#include "options.hpp"
#include "output/table.hpp"
#include "output/units.hpp"

namespace {

using lt::gguf::Value;
using lt::gguf::ValueType;

constexpr size_t kShownItems = 8;

// A metadata value as JSON; long arrays are summarised by their type and length.
nlohmann::json to_json(const Value& v) {
  switch (v.type) {
    case ValueType::Bool:
      return v.as_bool();
    case ValueType::String:
      return v.as_string();
    case ValueType::F32: {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v.as_float()));
      return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
    }
    case ValueType::F64:
      return v.as_float();
    case ValueType::I8:
    case ValueType::I16:
    case ValueType::I32:
    case ValueType::I64:
      return v.as_int();
    case ValueType::Array: {
      const auto& a = v.as_array();
      if (a.items.size() > kShownItems) return {{"array_length", a.items.size()}};
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : a.items) out.push_back(to_json(item));
      return out;
    }
    default:
      return v.as_uint();
  }
}

std::string to_text(const Value& v) {
  if (v.type == ValueType::Array && v.as_array().items.size() > kShownItems)
    return "[" + std::to_string(v.as_array().items.size()) + " items]";
  return to_json(v).dump();
}

std::string shape(const std::vector<uint64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? " x " : "") + std::to_string(dims[i]);
  return s.empty() ? "scalar" : s;
}

std::string hex(uint64_t x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, x);
  return buf;
}

// The architecture's main hyperparameters, as (short name, key suffix) pairs, in the order they are shown.
constexpr std::pair<const char*, const char*> kHyperparameters[] = {
    {"layers", "block_count"},
    {"d_model", "embedding_length"},
    {"heads", "attention.head_count"},
    {"kv_heads", "attention.head_count_kv"},
    {"head_dim", "attention.key_length"},
    {"ffn", "feed_forward_length"},
    {"experts", "expert_count"},
    {"experts_used", "expert_used_count"},
    {"expert_ffn", "expert_feed_forward_length"},
    {"vocab", "vocab_size"},
    {"context", "context_length"},
    {"rope_base", "rope.freq_base"},
    {"norm_eps", "attention.layer_norm_rms_epsilon"},
};

// A checkpoint's particulars as (field, value) pairs, in the order they are shown.
using Facts = std::vector<std::pair<std::string, std::string>>;

void inspect(const std::string& path, lt::cli::Format format) {
  using namespace lt::cli;
  const auto f = lt::gguf::File::open(path);
  // Reads every byte (the header digest reads the header alone): the name jobs and the database give the checkpoint.
  const std::string content = lt::content_digest(path);
  std::string arch;
  if (const Value* a = f.find("general.architecture"); a && a->type == ValueType::String) arch = a->as_string();
  std::string name;
  if (const Value* n = f.find("general.name"); n && n->type == ValueType::String) name = n->as_string();
  uint64_t params = 0, bytes = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_type;  // type: tensors, bytes
  for (const auto& t : f.tensors()) {
    params += t.elements();
    bytes += t.bytes;
    auto& [count, b] = by_type[std::string(lt::ggml::traits_of(t.type).name)];
    ++count;
    b += t.bytes;
  }
  std::vector<std::pair<std::string, nlohmann::json>> hyper;
  for (const auto& [short_name, suffix] : kHyperparameters)
    if (const Value* v = f.find(arch + "." + suffix); v && v->type != ValueType::Array && v->type != ValueType::String)
      hyper.emplace_back(short_name, to_json(*v));
  if (format == Format::Json) {
    nlohmann::json j;
    j["file"] = path;
    j["size"] = f.size();
    j["digest"] = hex(f.digest());
    j["content_digest"] = content;
    j["version"] = f.version();
    j["alignment"] = f.alignment();
    j["data_start"] = f.data_start();
    j["architecture"] = arch;
    j["name"] = name;
    auto& h = j["hyperparameters"] = nlohmann::json::object();
    for (const auto& [k, v] : hyper) h[k] = v;
    auto& md = j["metadata"] = nlohmann::json::object();
    for (const auto& [k, v] : f.metadata()) md[k] = to_json(v);
    auto& ts = j["tensors"] = nlohmann::json::array();
    for (const auto& t : f.tensors())
      ts.push_back({{"name", t.name},
                    {"type", std::string(lt::ggml::traits_of(t.type).name)},
                    {"shape", t.dims},
                    {"bytes", t.bytes},
                    {"offset", t.offset}});
    auto& types = j["totals"]["by_type"] = nlohmann::json::object();
    for (const auto& [type, cb] : by_type) types[type] = {{"tensors", cb.first}, {"bytes", cb.second}};
    j["totals"]["tensors"] = f.tensors().size();
    j["totals"]["parameters"] = params;
    j["totals"]["bytes"] = bytes;
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::string hyper_text;
  for (const auto& [k, v] : hyper) hyper_text += (hyper_text.empty() ? "" : " ") + k + "=" + v.dump();
  const Facts facts = {
      {"file", path},
      {"digest", content + " (XXH3-128 of every byte: the checkpoint's name in jobs and the database)"},
      {"identity", std::to_string(f.size()) + " bytes, header digest xxh64:" + hex(f.digest())},
      {"format", "GGUF v" + std::to_string(f.version()) + ", alignment " + std::to_string(f.alignment()) +
                     ", data at byte " + std::to_string(f.data_start())},
      {"architecture", arch.empty() ? "(none)" : arch},
      {"name", name.empty() ? "(none)" : name},
      {"hyperparameters", hyper_text},
  };
  Table metadata;
  metadata.columns = {{"key", "metadata"}, {"value", "value"}};
  for (const auto& [k, v] : f.metadata()) metadata.add({text(k), {to_text(v), to_json(v)}});
  Table tensors;
  tensors.columns = {{"tensor", "tensor"},
                     {"type", "type"},
                     {"shape", "shape"},
                     {"bytes", "bytes", true},
                     {"offset", "offset", true, Audience::Programs}};
  for (const auto& t : f.tensors())
    tensors.add({text(t.name),
                 text(std::string(lt::ggml::traits_of(t.type).name)),
                 {shape(t.dims), t.dims},
                 count(int64_t(t.bytes)),
                 count(int64_t(t.offset))});
  tensors.notes.push_back("totals: " + std::to_string(f.tensors().size()) + " tensors, " + thousands(double(params)) +
                          " parameters, " + thousands(double(bytes)) + " bytes of tensor data");
  Table types;
  types.columns = {{"type", "type"}, {"tensors", "tensors", true}, {"bytes", "bytes", true}};
  for (const auto& [type, cb] : by_type) types.add({text(type), count(int64_t(cb.first)), count(int64_t(cb.second))});
  if (format == Format::Csv) {  // (one table a CSV file: the tensors)
    std::printf("%s", render(tensors, format).c_str());
    return;
  }
  if (format == Format::Markdown) {
    Table checkpoint;
    checkpoint.columns = {{"field", "field"}, {"value", "value"}};
    for (const auto& [k, v] : facts) checkpoint.add({text(k), text(v)});
    const std::pair<const char*, const Table*> sections[] = {
        {"checkpoint", &checkpoint}, {"metadata", &metadata}, {"tensors", &tensors}, {"tensors by type", &types}};
    for (const auto& [title, table] : sections)
      std::printf("%s## %s\n\n%s", title == sections[0].first ? "" : "\n", title, render(*table, format).c_str());
    return;
  }
  for (const auto& [k, v] : facts) std::printf("%-13s %s\n", (k + ":").c_str(), v.c_str());
  std::printf("\n%s\n%s\n%s", render(metadata, format).c_str(), render(tensors, format).c_str(),
              render(types, format).c_str());
}

const bool registered = lt::cli::add_command(
    {11, [](CLI::App& app) {
       auto* c = app.add_subcommand("inspect", "Show a GGUF checkpoint's architecture, hyperparameters and tensors");
       auto path = std::make_shared<std::string>();
       auto out = std::make_shared<lt::cli::Output>();
       c->add_option("file", *path, "The GGUF checkpoint")->required();
       out->add(c);
       c->footer("--format csv prints the tensors; json every field, the metadata's values as JSON.");
       c->callback([path, out] { inspect(*path, out->format); });
     }});

// `lane-tune digest FILE...`: each file's content digest, the identity the coordinator stores a checkpoint by and
// `status`, `results` and the database name it with (not inspect's header digest, a hash of the header alone), a row
// per file. A file that cannot be read is reported and the others are still digested; the exit status is the first
// failure's.
const bool registered_digest = lt::cli::add_command(
    {12, [](CLI::App& app) {
       auto* c = app.add_subcommand(
           "digest", "Print each file's content digest (XXH3-128), the checkpoint's identity in jobs and the database");
       auto files = std::make_shared<std::vector<std::string>>();
       auto out = std::make_shared<lt::cli::Output>();
       c->add_option("files", *files, "The files")->required();
       out->add(c);
       c->callback([files, out] {
         lt::cli::Table t;
         t.columns = {{"digest", "digest"}, {"file", "file"}};
         for (const auto& f : *files) {
           try {
             t.add({lt::cli::text(lt::content_digest(f)), lt::cli::text(f)});
           } catch (const lt::Error& e) {
             std::fprintf(stderr, "lane-tune: %s\n", e.what());
             if (lt::cli::exit_status() == lt::cli::kExitOk)
               lt::cli::exit_status() =
                   dynamic_cast<const lt::NotFound*>(&e) ? lt::cli::kExitNotFound : lt::cli::kExitFailed;
           }
         }
         if (!t.rows.empty() || out->format != lt::cli::Format::Table) out->print(t);
       });
     }});

}  // namespace
